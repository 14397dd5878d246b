// Replicas of a replicated index that never answer what they should not: in-process replicas (real stores) on a
// real nats-server. A replica that falls behind after start leaves its shard's queue group, read-your-writes
// holds through the index that made the write, a trimmed log or a store of another shard is refused at start,
// an entry a replica cannot read stops it, and upserts carry their vectors so replicas never embed.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { Chunk, INDEX_LOG_STREAM, indexLogSubject, IngestStatus, RetrievalMode, type IngestDocumentsRequest, type JobLane, type SearchRequest } from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import { connectNats, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChunkStore, listIndexReplicas, LocalIndex, LogTrimmedError, ServiceError, ShardedNatsIndex, startIndexReplica, StoreConfigMismatchError, type IndexReplica } from "../src/index.js";
import { mergeShardLists } from "../src/nats/mergeShards.js";
import { TestEmbedder } from "./helpers/serviceHarness.js";
import { tempDir, testStoreOptions } from "./helpers/tempStore.js";

const signal = new AbortController().signal;

/** The tests' embedder that can be told to fail the ingest lane only (queries still embed). */
class FlakyEmbedder extends TestEmbedder {
  failIngest = false;
  ingestCalls = 0;
  override async embed(texts: readonly string[], s?: AbortSignal, lane?: JobLane): Promise<Float32Array[]> {
    if (lane === "batch") {
      this.ingestCalls++;
      if (this.failIngest) throw new Error("the embedder is down (test)");
    }
    return super.embed(texts, s);
  }
}

const doc = (id: string, text: string, wait = 0, key?: string): IngestDocumentsRequest => ({
  document: { id, title: "", text, source: "replicas", license: "", metadata: {} },
  waitForReplicas: wait,
  ...(key !== undefined ? { idempotencyKey: key } : {}),
});

async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const missing = natsServerMissing();

describe.skipIf(missing !== undefined)(`index replicas${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let server: NatsServer;
  let gateway: NatsConnection;
  const dir = tempDir("attr-rag-replicas-");
  const open: { replica?: IndexReplica; store: ChunkStore; nc: NatsConnection }[] = [];
  let shards = 1;

  /** A fresh shard count per test (2, 3, …; 1 is the lag test's): each test has subjects of its own in the one log. */
  const nextShards = () => ++shards;

  async function replica(name: string, shard: number, count: number, embedder: TestEmbedder = new TestEmbedder(), o: { lines?: string[]; searchThreads?: number; url?: string } = {}) {
    const store = await ChunkStore.open(join(dir.path, name), testStoreOptions({ create: true }));
    if (o.searchThreads) await store.useSearchThreads(o.searchThreads);
    const nc = await connectNats({ url: o.url ?? server.url, name });
    const entry: (typeof open)[number] = { store, nc };
    open.push(entry);
    const log = (line: string) => o.lines?.push(line);
    entry.replica = await startIndexReplica(nc, new LocalIndex(store, embedder).context, { shard, shards: count }, { log, maxLag: { entries: 1_000, seconds: 1 }, lookMs: 100 });
    return { replica: entry.replica, store, embedder };
  }

  beforeAll(async () => {
    server = await startNatsServer();
    gateway = await connectNats({ url: server.url, name: "gateway" });
  });

  afterAll(async () => {
    for (const o of open) await o.replica?.stop();
    for (const o of open) await o.nc.close().catch(() => {});
    for (const o of open) await o.store.close().catch(() => {});
    await gateway?.close();
    await server?.[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  });

  it("replicas - a replica that cannot apply leaves the queue group; a deleted document is never returned, through this index or another", async () => {
    // One shard: every search goes to these two replicas.
    const count = 1;
    const lines: string[] = [];
    const a = await replica("lag-a", 0, count);
    const b = await replica("lag-b", 0, count, new FlakyEmbedder(), { lines });
    // Entries without vectors: each replica embeds what it applies, and B's embedder is about to fail.
    const index = new ShardedNatsIndex(gateway, count, undefined, 20_000, { vectorsAtWriter: false });
    const ids = Array.from({ length: 200 }, (_, i) => `lag-${i}`).filter((id) => shardOf(id, count) === 0);
    const [gone, kept] = [ids[0]!, ids[1]!];
    expect((await index.ingest(doc(gone, "zirconyl chloride octahydrate precipitates from the cold filtrate"), signal)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_LOGGED);
    expect((await index.ingest(doc(kept, "zirconyl nitrate dissolves in warm water", 2), signal)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
    (b.embedder as FlakyEmbedder).failIngest = true;
    // A applies both; B stops at the first and keeps retrying it, still holding the document deleted after it.
    expect((await index.ingest(doc(ids[2]!, "zirconyl sulfate anhydrous powder", 1), signal)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
    expect(await index.deleteDocument({ docId: gone, waitForReplicas: 1 }, signal)).toEqual({ found: true, chunksDeleted: 1 });
    expect(b.store.getDocument(gone)).toBeDefined();

    const query = (mode: RetrievalMode): SearchRequest => ({ query: "zirconyl chloride octahydrate cold filtrate", options: { k: 5, mode }, includeQueryEmbedding: false });
    const searches = async (through: ShardedNatsIndex) => {
      const found: string[] = [];
      for (const mode of [RetrievalMode.RETRIEVAL_MODE_DENSE, RetrievalMode.RETRIEVAL_MODE_BM25]) {
        for (let i = 0; i < 20; i++) found.push(...(await through.search(query(mode), signal)).chunks.map((c) => c.chunk!.docId));
      }
      return found;
    };
    // At once, before B's lag passes its limit: the index that saw the delete applied asks until a replica that
    // applied it answers.
    const right = await searches(index);
    expect(right).toContain(kept);
    expect(right).not.toContain(gone);
    // B leaves the queue group within its limit (1 s here), says so in its log and in its status; then even an
    // index that never wrote anything (another gateway) gets no answer from it.
    // It logs the leaving once its subscription has stopped, which is after `serving` turns false: wait for both.
    await until("B to leave the queue group", () => !b.replica.serving && lines.some((l) => l.includes("left the queue group")));
    expect(lines.join("\n")).toMatch(/left the queue group of shard 0\/\d+: behind the ingest log: \d+ entr(y|ies) not applied/);
    const listed = await listIndexReplicas(gateway);
    const mine = listed.filter((r) => r.shards === count);
    expect(mine.map((r) => r.replica).sort()).toEqual([a.replica.follower.replicaId, b.replica.follower.replicaId].sort());
    const bStatus = mine.find((r) => r.replica === b.replica.follower.replicaId)!;
    expect(bStatus).toMatchObject({ serving: false, shard: 0 });
    expect(bStatus.lagEntries).toBeGreaterThan(0);
    expect(bStatus.reason).toContain("behind the ingest log");
    expect(mine.find((r) => r.replica === a.replica.follower.replicaId)).toMatchObject({ serving: true, lagEntries: 0, reason: "" });
    const other = await searches(new ShardedNatsIndex(gateway, count, undefined, 20_000));
    expect(other).not.toContain(gone);
    // The embedder is back: B applies what it missed and joins again.
    (b.embedder as FlakyEmbedder).failIngest = false;
    await until("B to answer again", () => b.replica.serving);
    expect(b.store.getDocument(gone)).toBeUndefined();
    expect(lines.join("\n")).toMatch(/caught up with the ingest log of shard 0\/\d+ at sequence \d+: answering its searches again/);
  }, 120_000);

  it("replicas - upserts carry vectors made once: each document is embedded once for all replicas, which store the same vectors", async () => {
    const count = nextShards();
    const [ea, eb] = [new FlakyEmbedder(), new FlakyEmbedder()];
    const a = await replica("vec-a", 1, count, ea);
    const b = await replica("vec-b", 1, count, eb);
    await replica("vec-c", 0, count);
    const index = new ShardedNatsIndex(gateway, count, undefined, 20_000);
    const ids = Array.from({ length: 200 }, (_, i) => `vec-${i}`).filter((id) => shardOf(id, count) === 1).slice(0, 5);
    // Longer than the test chunker's 300 characters: several chunks per document.
    const text = (id: string, i: number) => Array.from({ length: 4 }, (_, p) => `Paragraph ${p} of ${id}: weigh ${i} g of the salt, dissolve it in ${i + p} mL of warm water, stir until clear, then filter the solution through paper and keep the filtrate cold.`).join("\n\n");
    for (const [i, id] of ids.entries()) await index.ingest(doc(id, text(id, i)), signal);
    const last = await index.ingest(doc(ids[0]!, "Replaced text: weigh again.\n\nThen dry.", 2), signal);
    expect(last.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_REPLACED);
    // One embedding call per write, by whichever replica prepared it; none when they applied the entries.
    expect(ea.ingestCalls + eb.ingestCalls).toBe(ids.length + 1);
    for (const s of [a.store, b.store]) expect(s.stats()).toMatchObject({ documents: 5, vectors: a.store.stats().chunks });
    expect(a.store.stats().chunks).toBeGreaterThan(5);
    // The same vectors: dense scores of every chunk equal to the last bit on both replicas.
    const [probe] = await new TestEmbedder().embed(["weigh dissolve filter paragraph"]);
    const scores = (s: ChunkStore) => s.searchDense(probe!, { k: 100 }).map((h) => [h.chunkId, h.score]).sort();
    expect(scores(b.store)).toEqual(scores(a.store));
    // Without vectors in the entries (an older writer), each replica embeds what it applies.
    const old = new ShardedNatsIndex(gateway, count, undefined, 20_000, { vectorsAtWriter: false });
    const before = ea.ingestCalls + eb.ingestCalls;
    await old.ingest(doc(ids[1]!, "Older writer: no vectors.", 2), signal);
    expect(ea.ingestCalls + eb.ingestCalls - before).toBe(2);
  }, 60_000);

  it("replicas - a log trimmed past a shard whose subject is now empty refuses a new empty replica of it, naming the snapshot", async () => {
    // A server of its own: the trim takes every other test's entries too.
    await using trimmed = await startNatsServer();
    const url = trimmed.url;
    const nc = await connectNats({ url, name: "trim-writer" });
    try {
      const count = 2;
      const index = new ShardedNatsIndex(nc, count, undefined, 20_000);
      const of = (shard: number) => Array.from({ length: 200 }, (_, i) => `trim-${i}`).filter((id) => shardOf(id, count) === shard);
      const a0 = await replica("trim-a0", 0, count, new TestEmbedder(), { url });
      await replica("trim-a1", 1, count, new TestEmbedder(), { url });
      await index.ingest(doc(of(0)[0]!, "shard zero's only document", 1), signal);
      const kept = await index.ingest(doc(of(1)[0]!, "shard one's document", 1), signal);
      expect(kept.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
      // The operator trims every entry before shard 1's: shard 0's subject is empty now.
      const jsm = await jetstreamManager(nc);
      const last = (await jsm.streams.info(INDEX_LOG_STREAM)).state.last_seq;
      await jsm.streams.purge(INDEX_LOG_STREAM, { seq: last });
      expect((await jsm.streams.info(INDEX_LOG_STREAM, { subjects_filter: indexLogSubject(0, count) })).state.subjects?.[indexLogSubject(0, count)] ?? 0).toBe(0);
      const refused = await replica("trim-b0", 0, count, new TestEmbedder(), { url }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(LogTrimmedError);
      expect((refused as Error).message).toMatch(/the ingest log starts at sequence \d+, but the store .* has applied up to 0/);
      expect((refused as Error).message).toContain("attr-rag index snapshot --store THEIRS --out NEW");
      // The running replica of shard 0 looked at the log after its last entry: restarted, it is not refused.
      await until("A0 to record what it checked", () => a0.store.replica.checked >= last);
      await a0.replica.stop();
      const held = open.find((o) => o.store === a0.store)!;
      held.replica = await startIndexReplica(held.nc, new LocalIndex(a0.store, new TestEmbedder()).context, { shard: 0, shards: count });
      expect(held.replica.serving).toBe(true);
      for (const o of open.filter((o) => o.nc.getServer().endsWith(String(trimmed.port)))) {
        await o.replica?.stop();
        o.replica = undefined;
        await o.nc.close();
      }
    } finally {
      await nc.close();
    }
  }, 60_000);

  it("replicas - with no replica running, the list of replicas is empty (GetCluster of an unsharded index)", async () => {
    await using empty = await startNatsServer();
    const nc = await connectNats({ url: empty.url, name: "empty" });
    try {
      expect(await listIndexReplicas(nc, 200)).toEqual([]);
    } finally {
      await nc.close();
    }
  });

  it("replicas - a failed look-up of the log fails start-up (never 'nothing to catch up')", async () => {
    // A user who may not read the log's messages: the look-up of the shard's last entry is refused.
    const conf = join(dir.path, "limited.conf");
    writeFileSync(conf, `authorization { users = [ { user: admin, password: admin }, { user: limited, password: limited, permissions: { publish: { allow: [">"], deny: ["$JS.API.STREAM.MSG.GET.>"] }, subscribe: ">" } } ] }\n`);
    await using limitedServer = await startNatsServer({ configFile: conf });
    const admin = await connectNats({ url: limitedServer.url, name: "admin", user: "admin", pass: "admin" });
    const limited = await connectNats({ url: limitedServer.url, name: "limited", user: "limited", pass: "limited" });
    try {
      const index = new ShardedNatsIndex(admin, 1, undefined, 5_000);
      await index.ingest(doc("held", "a document the new replica must not miss"), signal);
      const store = await ChunkStore.open(join(dir.path, "limited"), testStoreOptions({ create: true }));
      try {
        const err = await startIndexReplica(limited, new LocalIndex(store, new TestEmbedder()).context, { shard: 0, shards: 1 }).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(Error);
        expect(store.getDocument("held")).toBeUndefined();
      } finally {
        await store.close();
      }
    } finally {
      await limited.close();
      await admin.close();
    }
  }, 60_000);

  it("replicas - an entry with an operation this version does not know stops the replica there, out of the queue group", async () => {
    const count = nextShards();
    const lines: string[] = [];
    const r = await replica("unknown-a", 0, count, new TestEmbedder(), { lines });
    const js = jetstream(gateway);
    // Field 9 (varint): an operation a newer writer might add.
    const unknown = await js.publish(indexLogSubject(0, count), new Uint8Array([0x48, 0x01]));
    const index = new ShardedNatsIndex(gateway, count, undefined, 5_000);
    const after = Array.from({ length: 100 }, (_, i) => `unknown-${i}`).find((id) => shardOf(id, count) === 0)!;
    await index.ingest(doc(after, "written after the unknown entry"), signal);
    await until("the replica to stop at the entry", () => !r.replica.serving);
    expect(r.store.replica.applied).toBeLessThan(unknown.seq);
    expect(r.store.getDocument(after)).toBeUndefined();
    expect(r.replica.status().reason).toMatch(new RegExp(`stopped at ingest log entry ${unknown.seq}: it holds an operation this version of attr-rag does not know`));
    expect(lines.join("\n")).toContain("upgrade `attr-rag index serve`");
    // Bytes that are no entry at all stop it the same way, naming what to do.
    const other = nextShards();
    const stopped = await replica("garbage-a", 0, other);
    const garbage = await js.publish(indexLogSubject(0, other), new Uint8Array([0xff, 0xff, 0xff]));
    await until("the replica to stop at the unreadable entry", () => !stopped.replica.serving);
    expect(stopped.replica.status().reason).toContain(`stopped at ingest log entry ${garbage.seq}: it is not an index log entry (3 bytes that do not decode`);
    expect(stopped.replica.status().reason).toContain(`nats stream rmm ${INDEX_LOG_STREAM} ${garbage.seq}`);
    // A replica started on that log refuses to catch up past it.
    const fresh = await replica("unknown-b", 0, count).catch((e: unknown) => e);
    expect(fresh).toBeInstanceOf(ServiceError);
    expect((fresh as Error).message).toMatch(/stopped at ingest log entry \d+/);
  }, 60_000);

  it("replicas - a store holding another shard's documents is refused; merged lists hold a chunk once", async () => {
    const count = nextShards();
    const store = await ChunkStore.open(join(dir.path, "stray"), testStoreOptions({ create: true }));
    const id = Array.from({ length: 100 }, (_, i) => `stray-${i}`).find((d) => shardOf(d, count) === 1)!;
    await store.upsertDocument({ id, text: "a document of shard one" }, (t) => new TestEmbedder().embed(t));
    const nc = await connectNats({ url: server.url, name: "stray" });
    open.push({ store, nc });
    const err = await startIndexReplica(nc, new LocalIndex(store, new TestEmbedder()).context, { shard: 0, shards: count }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreConfigMismatchError);
    expect((err as Error).message).toMatch(new RegExp(`holds 1 document\\(s\\) of other shards than 0/${count} \\("${id}" belongs to shard 1/${count}\\)`));
    expect(store.replica.shard).toBeUndefined();
    const chunk = (cid: string, score: number) => ({ chunk: Chunk.fromPartial({ id: cid, docId: "d" }), score, rank: 0 });
    const merged = mergeShardLists([[chunk("x", 0.9), chunk("y", 0.5)], [chunk("x", 0.9), chunk("z", 0.4)]], 3);
    expect(merged.map((c) => c.chunk!.id)).toEqual(["x", "y", "z"]);
  });

  it("replicas - an idempotency key stores a retried write once, and the retry that waits hears the replicas again", async () => {
    const count = nextShards();
    await replica("idem-a", 0, count);
    const index = new ShardedNatsIndex(gateway, count, undefined, 10_000);
    const id = Array.from({ length: 100 }, (_, i) => `idem-${i}`).find((d) => shardOf(d, count) === 0)!;
    const first = await index.ingest(doc(id, "version one", 1, "key-1"), signal);
    expect(first.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
    const jsm = await jetstreamManager(gateway);
    const held = async () => (await jsm.streams.info(INDEX_LOG_STREAM, { subjects_filter: indexLogSubject(0, count) })).state.subjects?.[indexLogSubject(0, count)] ?? 0;
    expect(await held()).toBe(1);
    // The client's retry (it never saw the answer): stored once, and it still learns what the replica did.
    const retry = await index.ingest(doc(id, "version one", 1, "key-1"), signal);
    expect(retry.results[0]).toMatchObject({ status: IngestStatus.INGEST_STATUS_INDEXED, chunkCount: 1 });
    expect(await held()).toBe(1);
    const logged = await index.ingest(doc(id, "version one", 0, "key-1"), signal);
    expect(logged.results[0]!.message).toMatch(/a retry of idempotency key "key-1": the first write is the one stored/);
    // Another key is another write.
    await index.ingest(doc(id, "version two", 1, "key-2"), signal);
    expect(await held()).toBe(2);
  });

  it("replicas - a publish the log does not confirm says it may have been written, and how to retry safely", async () => {
    await using paused = await startNatsServer();
    const nc = await connectNats({ url: paused.url, name: "paused" });
    try {
      const index = new ShardedNatsIndex(nc, 1, undefined, 1_000);
      await index.ingest(doc("p", "before the pause"), signal);
      process.kill(paused.pid()!, "SIGSTOP");
      try {
        // nats-server's threads stop when they next leave the kernel (one may be in an fsync of the first write):
        // publish only once /proc says the whole process is stopped.
        await until("nats-server to be stopped", () => readFileSync(`/proc/${paused.pid()!}/stat`, "utf8").split(") ")[1]!.startsWith("T"));
        const err = await index.ingest(doc("p", "during the pause"), signal).catch((e: unknown) => e);
        expect(err, `the ingest answered ${JSON.stringify(err)}`).toBeInstanceOf(ServiceError);
        expect((err as ServiceError).message).toMatch(/did not confirm document "p" .*; it may or may not have been written\. Retry with an idempotency_key/);
        const keyed = await index.ingest(doc("p", "during the pause", 0, "k"), signal).catch((e: unknown) => e);
        expect((keyed as ServiceError).message).toContain('Retry with the same idempotency_key ("k") within 2 minutes');
      } finally {
        process.kill(paused.pid()!, "SIGCONT");
      }
    } finally {
      await nc.close().catch(() => {});
    }
  }, 30_000);

  it("replicas - with search threads, a shard's answer is stale when an entry lands while the query is embedded", async () => {
    const count = nextShards();
    const slow = new TestEmbedder();
    const r = await replica("atomic-a", 0, count, slow, { searchThreads: 1 });
    const index = new ShardedNatsIndex(gateway, count, undefined, 10_000);
    const ids = Array.from({ length: 200 }, (_, i) => `atomic-${i}`).filter((d) => shardOf(d, count) === 0);
    await index.ingest(doc(ids[0]!, "cerium oxide polish", 1), signal);
    const version = r.store.replica.applied;
    const { corpus } = { corpus: { rows: 1, tokens: 3, documentFrequency: { cerium: 1 }, multiTokenPhrases: [], version } };
    // The query's embedding waits while another entry is applied: figures counted at `version` no longer fit.
    slow.delayMs = 300;
    const shard = (await import("../src/nats/natsIndex.js")).NatsIndex.shard(gateway, { shard: 0, shards: count });
    const answer = shard.shardSearch({ search: { query: "cerium", options: { k: 5, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID }, includeQueryEmbedding: false }, corpus, candidates: 5, expectedVersion: version, checkVersion: true }, signal);
    await new Promise((resolve) => setTimeout(resolve, 50));
    slow.delayMs = 0;
    await index.ingest(doc(ids[1]!, "cerium nitrate", 1), signal);
    const got = await answer;
    expect(got.stale).toBe(true);
    expect(got.version).toBeGreaterThan(version);
  }, 60_000);

  it("replicas - a search thread reads the applied sequence in the snapshot it searches", async () => {
    const store = await ChunkStore.open(join(dir.path, "snapshot"), testStoreOptions({ create: true }));
    const nc = await connectNats({ url: server.url, name: "snapshot" });
    open.push({ store, nc });
    await store.useSearchThreads(1);
    const embed = (t: readonly string[]) => new TestEmbedder().embed(t);
    await store.upsertDocuments([{ id: "la-0", text: "lanthanum 0" }], embed, { appliedSequence: 1 });
    // The thread is up before the writes start.
    expect((await store.searchBm25AtVersion("lanthanum", { k: 10 })).version).toBe(1);
    // Each write holds the word once and moves the version by one: an answer's hits are exactly its version.
    let writing = true;
    const writes = (async () => {
      for (let v = 2; v <= 400; v++) {
        await store.upsertDocuments([{ id: `la-${v}`, text: `lanthanum ${v}` }], embed, { appliedSequence: v });
        // As a follower does between NATS messages: the event loop turns, and answers from the thread come in.
        await new Promise((resolve) => setImmediate(resolve));
      }
      writing = false;
    })();
    const versions = new Set<number>();
    let checked = 0;
    await Promise.all(
      [0, 1].map(async () => {
        while (writing) {
          const { hits, version } = await store.searchBm25AtVersion("lanthanum", { k: 500 });
          expect(hits.length, `hits at version ${version}`).toBe(version);
          versions.add(version);
          checked++;
        }
      }),
    );
    await writes;
    expect(checked).toBeGreaterThan(20);
    expect(versions.size).toBeGreaterThan(5);
  }, 60_000);
});
