// Replicas of a shard fed by the JetStream ingest log, as real processes on a real nats-server: searches keep
// answering while a replica is SIGKILLed, a restarted replica and a new empty one catch up from the log, and
// every replica ends with the same documents and chunks.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { credentials } from "@grpc/grpc-js";
import { jetstreamManager } from "@nats-io/jetstream";
import { INDEX_LOG_STREAM, IndexServiceClient, IngestStatus, RetrievalMode, type IngestDocumentsRequest, type SearchRequest, type SearchResponse } from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import { ChunkStore, ShardedNatsIndex } from "@attr-rag/index";
import { connectNats, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startServer, TEST_MODEL } from "./helpers/runCli.js";

const signal = new AbortController().signal;
const WORDS = ["acid", "base", "buffer", "titrate", "reflux", "filter", "crystal", "solvent", "heat", "cool", "stir", "weigh", "dilute", "extract", "distil", "dry"];

/** A document with a few distinctive words, so BM25 and dense both rank it for its own words. */
function doc(i: number, version = 1): IngestDocumentsRequest {
  const words = [WORDS[i % WORDS.length], WORDS[(i * 7 + 3) % WORDS.length], WORDS[(i * 5 + 1) % WORDS.length]];
  const text = `Step ${i} (v${version}): ${words.join(" then ")} the sample ${i}. Record the mass of product ${i} and note the colour.`;
  return { document: { id: `doc-${i}`, title: `Procedure ${i}`, text, source: "replicas-test", license: "CC0", metadata: {} }, waitForReplicas: 0 };
}

type Replica = Awaited<ReturnType<typeof startServer>> & { store: string; exited: Promise<unknown> };

function search(address: string, request: SearchRequest): Promise<SearchResponse> {
  const client = new IndexServiceClient(address, credentials.createInsecure());
  return new Promise<SearchResponse>((resolve, reject) => client.search(request, (err, res) => (err ? reject(err) : resolve(res)))).finally(() => client.close());
}

/**
 * Every document row (every column: replicas store their log entry's time, so even ingested_at agrees) and
 * chunk (by id; the row number is the store's own) of a stopped replica's store.
 */
function contents(store: string): { documents: unknown[]; chunks: unknown[] } {
  const db = new Database(join(store, "store.sqlite"), { readonly: true });
  try {
    return {
      documents: db.prepare("SELECT * FROM documents ORDER BY id").all(),
      chunks: db.prepare(`SELECT id, doc_id, ordinal, start, "end", text FROM chunks ORDER BY id`).all(),
    };
  } finally {
    db.close();
  }
}

/**
 * Every stored vector, seen through exact scores: the cosine of each chunk against fixed probe vectors, to the
 * last bit (the vector index has no read-back). Replicas fed the writer's vectors agree exactly; replicas that
 * embedded on their own agreed only to about 1e-6.
 */
async function vectorScores(store: string): Promise<Map<string, number[]>> {
  const s = await ChunkStore.open(store);
  try {
    const chunks = s.stats().chunks;
    const scores = new Map<string, number[]>();
    for (let p = 0; p < 3; p++) {
      const probe = Float32Array.from({ length: s.embedder.dimensions }, (_, i) => Math.sin(i * (p + 1) + p));
      for (const hit of s.searchDense(probe, { k: chunks })) scores.set(hit.chunkId, [...(scores.get(hit.chunkId) ?? []), hit.score]);
    }
    expect(scores.size).toBe(chunks);
    return scores;
  } finally {
    await s.close();
  }
}

const missing = natsServerMissing();

describe.skipIf(missing !== undefined)(`index replicas over the ingest log${missing ? ` (skipped: ${missing})` : ""}`, () => {
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-replicas-"));
  let server: NatsServer;
  let nc: NatsConnection;
  let index: ShardedNatsIndex;
  const running: Replica[] = [];

  async function startReplica(name: string, shard = "0/1"): Promise<Replica> {
    const store = join(dir, name);
    const r = await startServer(["index", "serve", "--store", store, "--create", "--port", "0", "--nats", server.url, "--shard", shard, "--embedder", `gguf:${TEST_MODEL}`, "--embed-threads", "1", "--search-threads", "0"]);
    const replica = { ...r, store, exited: new Promise((resolve) => (r.child.exitCode !== null || r.child.signalCode !== null ? resolve(undefined) : r.child.once("exit", resolve))) };
    running.push(replica);
    return replica;
  }

  beforeAll(async () => {
    server = await startNatsServer();
    nc = await connectNats({ url: server.url, name: "replicas-test" });
    index = new ShardedNatsIndex(nc, 1);
  });

  afterAll(async () => {
    for (const r of running) if (r.child.exitCode === null && r.child.signalCode === null) await r.stop();
    await nc?.close();
    await server?.[Symbol.asyncDispose]();
    rmSync(dir, { recursive: true, force: true });
  });

  it("replicas - 500 searches while a replica is SIGKILLed: none fails; it restarts and catches up, a third empty one too, deletes included", async () => {
    const a = await startReplica("a");
    let b = await startReplica("b");
    // 300 documents through the log, the last one waiting for both replicas (read-your-writes).
    for (let i = 0; i < 299; i++) expect((await index.ingest(doc(i), signal)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_LOGGED);
    const last = await index.ingest({ ...doc(299), waitForReplicas: 2 }, signal);
    expect(last.results[0]).toMatchObject({ status: IngestStatus.INGEST_STATUS_INDEXED, chunkCount: 1 });
    expect((await index.getStats(signal)).documents).toBe(300);

    const queries = Array.from({ length: 500 }, (_, i) => ({ query: `${WORDS[i % WORDS.length]} sample ${i % 300}`, mode: [RetrievalMode.RETRIEVAL_MODE_BM25, RetrievalMode.RETRIEVAL_MODE_DENSE, RetrievalMode.RETRIEVAL_MODE_HYBRID][i % 3]! }));
    const expected = new Map<number, string[]>();
    let done = 0;
    let failed = 0;
    let killed = false;
    const lanes = Array.from({ length: 4 }, async (_, lane) => {
      for (let i = lane; i < queries.length; i += 4) {
        if (done >= 150 && !killed) {
          killed = true;
          b.child.kill("SIGKILL");
        }
        const q = queries[i]!;
        try {
          const got = await index.search({ query: q.query, options: { k: 5, mode: q.mode }, includeQueryEmbedding: false }, signal);
          expect(got.chunks).toHaveLength(5);
          expected.set(i, got.chunks.map((c) => c.chunk!.id));
        } catch (err) {
          failed++;
          throw err;
        }
        done++;
      }
    });
    await Promise.all(lanes);
    expect(killed).toBe(true);
    expect({ done, failed }).toEqual({ done: 500, failed: 0 });

    // While b is down: 50 more documents, one changed, two deleted (a applies them; b must catch up).
    for (let i = 300; i < 350; i++) await index.ingest(doc(i), signal);
    expect((await index.ingest({ ...doc(7, 2), waitForReplicas: 1 }, signal)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_REPLACED);
    expect(await index.deleteDocument({ docId: "doc-11", waitForReplicas: 1 }, signal)).toEqual({ found: true, chunksDeleted: 1 });
    expect(await index.deleteDocument({ docId: "doc-12", waitForReplicas: 0 }, signal)).toEqual({ found: true, chunksDeleted: 1 });

    b = await startReplica("b");
    const c = await startReplica("c");
    // Caught up before answering ("listening" comes after): every replica's own port has the same index.
    const probe = (mode: RetrievalMode): SearchRequest => ({ query: "dilute the sample 12 and extract", options: { k: 10, mode }, includeQueryEmbedding: false });
    for (const mode of [RetrievalMode.RETRIEVAL_MODE_BM25, RetrievalMode.RETRIEVAL_MODE_DENSE, RetrievalMode.RETRIEVAL_MODE_HYBRID]) {
      const [fromA, fromB, fromC] = (await Promise.all([a, b, c].map((r) => search(r.address, probe(mode))))) as [SearchResponse, SearchResponse, SearchResponse];
      // Exactly, dense and hybrid too: every replica stores the vectors the writer's entry carried.
      expect(fromB).toEqual(fromA);
      expect(fromC).toEqual(fromA);
      for (const hit of fromA.chunks) expect(["doc-11", "doc-12"]).not.toContain(hit.chunk!.docId);
    }
    expect((await index.getStats(signal)).documents).toBe(348);

    for (const r of [a, b, c]) expect(await r.stop()).toBe(0);
    const [ca, cb, cc] = [a, b, c].map((r) => contents(r.store)) as [ReturnType<typeof contents>, ReturnType<typeof contents>, ReturnType<typeof contents>];
    expect(ca.documents).toHaveLength(348);
    expect(cb).toEqual(ca);
    expect(cc).toEqual(ca);
    const va = await vectorScores(a.store);
    for (const r of [b, c]) expect(await vectorScores(r.store)).toEqual(va);
  }, 240_000);

  it("replicas - 20,000 documents ingested while a replica is SIGKILLed and restarted twice: both end with the same chunks, none lost or doubled", async () => {
    // Shard 0 of 2: a log subject of its own, apart from the test above (its documents are the ones shardOf sends there).
    const sharded = new ShardedNatsIndex(nc, 2);
    const a = await startReplica("big-a", "0/2");
    let b = await startReplica("big-b", "0/2");
    // Short texts: each is embedded once, by the replica that prepares its entry.
    const docs: IngestDocumentsRequest[] = [];
    for (let i = 0; docs.length < 20_000; i++) {
      const id = `big-${i}`;
      if (shardOf(id, 2) !== 0) continue;
      docs.push({ document: { id, title: "", text: `${WORDS[i % WORDS.length]} ${i}`, source: "", license: "", metadata: {} }, waitForReplicas: 0 });
    }
    let next = 0;
    const lanes = Array.from({ length: 8 }, async () => {
      while (next < docs.length) {
        const i = next++;
        expect((await sharded.ingest(docs[i]!, signal)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_LOGGED);
      }
    });
    // Killed twice while the documents stream in and it applies them (it is behind the log), each time started
    // again over the same store.
    const killer = (async () => {
      for (const at of [4_000, 12_000]) {
        while (next < at) await new Promise((resolve) => setTimeout(resolve, 20));
        b.child.kill("SIGKILL");
        await b.exited;
        b = await startReplica("big-b", "0/2");
      }
    })();
    await Promise.all([...lanes, killer]);
    // Sent again, waiting for both: applied after every earlier entry of the shard, on each replica.
    const last = await sharded.ingest({ ...docs[docs.length - 1]!, waitForReplicas: 2 }, signal);
    expect(last.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_UNCHANGED);
    for (const r of [a, b]) expect(await r.stop()).toBe(0);
    const [ca, cb] = [a, b].map((r) => contents(r.store)) as [ReturnType<typeof contents>, ReturnType<typeof contents>];
    expect(ca.documents).toHaveLength(20_000);
    expect(ca.chunks).toHaveLength(20_000);
    expect(new Set(ca.chunks.map((c) => (c as { id: string }).id)).size).toBe(20_000);
    expect(cb).toEqual(ca);
  }, 600_000);

  it("replicas - a log trimmed past a new replica's start is refused, naming the remedy; a snapshot of a running replica plus the log after it catches up", async () => {
    const sharded = new ShardedNatsIndex(nc, 2);
    const ofShard1 = Array.from({ length: 400 }, (_, i) => `trim-${i}`).filter((id) => shardOf(id, 2) === 1);
    const write = (id: string, wait = 0) => sharded.ingest({ document: { id, title: "", text: `${id} filter the crystals`, source: "", license: "", metadata: {} }, waitForReplicas: wait }, signal);
    const a = await startReplica("trim-a", "1/2");
    for (const id of ofShard1.slice(0, 30)) await write(id);
    const applied = await write(ofShard1[30]!, 1);
    expect(applied.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
    // The operator trims the log: every entry before the last one goes.
    const jsm = await jetstreamManager(nc);
    const last = (await jsm.streams.info(INDEX_LOG_STREAM)).state.last_seq;
    await jsm.streams.purge(INDEX_LOG_STREAM, { seq: last });
    const refused = await runCli(["index", "serve", "--store", join(dir, "trim-b"), "--create", "--port", "0", "--nats", server.url, "--shard", "1/2", "--embedder", `gguf:${TEST_MODEL}`, "--embed-threads", "1"]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/the ingest log starts at sequence \d+, but the store .* has applied up to 0/);
    expect(refused.stderr).toContain("attr-rag index snapshot --store THEIRS --out NEW");
    // Shard 0's subject is empty now (every entry of it was before the cut): a new replica of it is refused
    // all the same, since the trimmed entries may have been its own.
    const empty = await runCli(["index", "serve", "--store", join(dir, "trim-z"), "--create", "--port", "0", "--nats", server.url, "--shard", "0/2", "--embedder", `gguf:${TEST_MODEL}`, "--embed-threads", "1"]);
    expect(empty.code, empty.stderr).toBe(2);
    expect(empty.stderr).toMatch(/the ingest log starts at sequence \d+, but the store .*trim-z has applied up to 0/);
    // A snapshot of the running replica, then more writes: the new replica applies only those.
    const snap = await runCli(["index", "snapshot", "--store", a.store, "--out", join(dir, "trim-c")]);
    expect(snap.code, snap.stderr).toBe(0);
    expect(snap.stdout).toMatch(/31 documents, shard 1\/2, ingest log applied up to \d+/);
    for (const id of ofShard1.slice(31, 40)) await write(id);
    const c = await startReplica("trim-c", "1/2");
    expect((await write(ofShard1[40]!, 2)).results[0]!.status).toBe(IngestStatus.INGEST_STATUS_INDEXED);
    for (const r of [a, c]) expect(await r.stop()).toBe(0);
    const [ca, cc] = [a, c].map((r) => contents(r.store)) as [ReturnType<typeof contents>, ReturnType<typeof contents>];
    expect(ca.documents).toHaveLength(41);
    expect(cc).toEqual(ca);
  }, 240_000);
});
