import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { status } from "@grpc/grpc-js";
import { IngestStatus, RetrievalMode, type ScoredChunk, type SearchRequest } from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import { connectNats, ConnectionWatch, natsServerMissing, startNatsServer, type NatsConnection, type NatsServer } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChunkStore, LocalIndex, NatsIndex, ServiceError, ShardedNatsIndex, snapshotStore, startIndexReplica, type IndexReplica } from "../src/index.js";
import { fakeEmbed } from "./helpers/fakeEmbedder.mjs";
import { TestEmbedder } from "./helpers/serviceHarness.js";
import { tempDir, testStoreOptions } from "./helpers/tempStore.js";

const signal = new AbortController().signal;
const DATA = join(dirname(fileURLToPath(import.meta.url)), "../../../../shared/data");
const DEMO = join(dirname(fileURLToPath(import.meta.url)), "../../../examples/demo-corpus");
/** The public sets when ../shared is beside the checkout, else the demo corpus (what a stranger's clone has). */
const SETS = ["chemlitqa-train", "chemex-like-train"].filter((s) => existsSync(join(DATA, s, "corpus.jsonl"))).map((s) => join(DATA, s));
if (SETS.length === 0) SETS.push(DEMO);
/** Questions per set: every question of the sets is compared by `attr-rag bench shards`; here a spread of them. */
const QUESTIONS_PER_SET = 40;
const MODES = [RetrievalMode.RETRIEVAL_MODE_BM25, RetrievalMode.RETRIEVAL_MODE_DENSE, RetrievalMode.RETRIEVAL_MODE_HYBRID] as const;

interface CorpusDoc {
  id: string;
  title: string;
  text: string;
  source: string;
}

function readJsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l) as T);
}

/** Every k-th question, so the spread covers the whole file. */
function spread<T>(items: readonly T[], n: number): T[] {
  const step = Math.max(1, Math.floor(items.length / n));
  return items.filter((_, i) => i % step === 0).slice(0, n);
}

/**
 * The sharded list equals one store's: same scores (relative 1e-9) position by position, same ids in the
 * same order, except inside a run of equal scores (one store orders a tie by insertion, the merge by shard),
 * where the ids must be the same set, or, for a run the cut at k splits, ids of that run in one store.
 */
function expectSameRanking(sharded: readonly ScoredChunk[], single: readonly ScoredChunk[], k: number, what: string): void {
  const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));
  expect(sharded.length, what).toBe(Math.min(k, single.length));
  let i = 0;
  while (i < sharded.length) {
    let j = i + 1;
    while (j < single.length && near(single[j]!.score, single[i]!.score)) j++;
    for (let at = i; at < Math.min(j, sharded.length); at++) expect(near(sharded[at]!.score, single[at]!.score), `${what}: score at ${at + 1}`).toBe(true);
    const run = new Set(single.slice(i, j).map((c) => c.chunk!.id));
    const got = sharded.slice(i, Math.min(j, sharded.length)).map((c) => c.chunk!.id);
    if (j - i === 1) expect(got, `${what}: id at ${i + 1}`).toEqual([single[i]!.chunk!.id]);
    else for (const id of got) expect(run.has(id), `${what}: ${id} at ${i + 1}..${j} is in one store's tie run`).toBe(true);
    if (j <= sharded.length) expect(new Set(got), `${what}: tie run ${i + 1}..${j}`).toEqual(run);
    i = j;
  }
  for (const [at, c] of sharded.entries()) expect(c.rank, `${what}: rank field`).toBe(at + 1);
}

const missing = natsServerMissing();

describe.skipIf(missing !== undefined)(`sharded index over NATS${missing ? ` (skipped: ${missing})` : ""}`, () => {
  // One NATS server per set: shards of two sets on one server would answer each other's subjects.
  const servers: NatsServer[] = [];
  let gateway: NatsConnection;
  const connections: NatsConnection[] = [];
  const replicas: IndexReplica[] = [];
  const stores: ChunkStore[] = [];
  const dir = tempDir("attr-rag-shards-");
  const embedder = new TestEmbedder();
  /** Per set: one store holding every document, and a sharded index of 1, 2 and 3 shards. */
  const sets: { name: string; single: LocalIndex; questions: string[]; docs: CorpusDoc[]; sharded: Map<number, ShardedNatsIndex>; client: NatsConnection }[] = [];
  const gatewayOf = (set: { client: NatsConnection }) => set.client;

  async function openStore(name: string, docs: readonly CorpusDoc[]): Promise<ChunkStore> {
    // The store defaults (not the tests' one-chunk-per-paragraph chunker): what `attr-rag ingest` builds.
    const store = await ChunkStore.open(join(dir.path, name), testStoreOptions({ chunker: undefined }));
    stores.push(store);
    for (const d of docs) await store.upsertDocument({ id: d.id, title: d.title, text: d.text, source: d.source }, fakeEmbed);
    return store;
  }

  async function serveShards(server: NatsServer, client: NatsConnection, set: string, docs: readonly CorpusDoc[], shards: number, copyOf?: ChunkStore): Promise<ShardedNatsIndex> {
    for (let shard = 0; shard < shards; shard++) {
      const store = copyOf !== undefined ? await copyStore(copyOf, `${set}-copy`) : await openStore(`${set}-${shard}-of-${shards}`, docs.filter((d) => shardOf(d.id, shards) === shard));
      // Search threads, as `attr-rag index serve` runs them by default: BM25 off the event loop, on its own snapshot.
      await store.useSearchThreads(1);
      const nc = await connectNats({ url: server.url, name: `shard-${shard}` });
      connections.push(nc);
      replicas.push(await startIndexReplica(nc, new LocalIndex(store, embedder).context, { shard, shards }));
    }
    return new ShardedNatsIndex(client, shards, new ConnectionWatch(client));
  }

  /** Another store with the same files (a snapshot), so the one-shard index is not the reference store itself. */
  async function copyStore(source: ChunkStore, name: string): Promise<ChunkStore> {
    await snapshotStore(source.path, join(dir.path, name));
    const store = await ChunkStore.open(join(dir.path, name), testStoreOptions({ chunker: undefined, create: false }));
    stores.push(store);
    return store;
  }

  beforeAll(async () => {
    for (const path of SETS) {
      const name = path.split("/").pop()!;
      const server = await startNatsServer();
      servers.push(server);
      const client = await connectNats({ url: server.url, name: "gateway" });
      connections.push(client);
      gateway ??= client;
      const docs = readJsonl<CorpusDoc>(join(path, "corpus.jsonl"));
      const questions = spread(
        readJsonl<{ question: string }>(join(path, "questions.jsonl")).map((q) => q.question),
        QUESTIONS_PER_SET,
      );
      const store = await openStore(`${name}-all`, docs);
      const sharded = new Map<number, ShardedNatsIndex>();
      // One shard of one is a copy of the whole store, served over NATS.
      sharded.set(1, await serveShards(server, client, name, docs, 1, store));
      for (const s of [2, 3]) sharded.set(s, await serveShards(server, client, name, docs, s));
      sets.push({ name, single: new LocalIndex(store, embedder), questions, docs, sharded, client });
    }
  }, 600_000);

  afterAll(async () => {
    for (const r of replicas) await r.stop();
    for (const nc of connections) await nc.close().catch(() => {});
    for (const s of stores) await s.close();
    for (const server of servers) await server[Symbol.asyncDispose]();
    dir[Symbol.dispose]();
  });

  it("sharded - 1, 2 and 3 shards rank bm25, dense and hybrid top-30 as one store holding every document", async () => {
    let compared = 0;
    for (const set of sets) {
      for (const q of set.questions) {
        for (const mode of MODES) {
          // One store ranks 60 deep, so a run of equal scores the cut at 30 splits is known whole (hybrid at 30: its
          // candidate lists, max(k, 50) long, depend on k, and the fused scores with them).
          const hybrid = mode === RetrievalMode.RETRIEVAL_MODE_HYBRID;
          const single = (await set.single.search({ query: q, options: { k: hybrid ? 30 : 60, mode }, includeQueryEmbedding: false }, signal)).chunks;
          for (const [shards, index] of set.sharded) {
            const request: SearchRequest = { query: q, options: { k: 30, mode }, includeQueryEmbedding: false };
            const got = await index.search(request, signal);
            expect(got.mode).toBe(mode);
            expectSameRanking(got.chunks, single, 30, `${set.name} ${RetrievalMode[mode]} ${shards} shards: ${q}`);
            compared++;
          }
        }
      }
    }
    expect(compared).toBe(sets.reduce((n, s) => n + s.questions.length, 0) * MODES.length * 3);
  }, 300_000);

  it("sharded - hybrid equals one store's fusion of the same lists, scores and per-list ranks included", async () => {
    let compared = 0;
    let exact = 0;
    for (const set of sets) {
      for (const q of set.questions.slice(0, 10)) {
        const single = (await set.single.search({ query: q, options: { k: 30, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID }, includeQueryEmbedding: true }, signal));
        const got = await set.sharded.get(3)!.search({ query: q, options: { k: 30, mode: RetrievalMode.RETRIEVAL_MODE_HYBRID }, includeQueryEmbedding: true }, signal);
        expect(got.embedder).toBe(single.embedder);
        expect(got.queryEmbedding).toEqual(single.queryEmbedding);
        // Without ties among the fused scores the fusion is one store's exactly (each list's rank of a chunk may
        // differ inside a run of equal list scores, as the tie order does; whether it is in each list may not).
        const tied = new Set(single.chunks.map((c) => c.score)).size < single.chunks.length;
        const shape = (c: ScoredChunk) => [c.chunk!.id, c.score, c.bm25Rank !== undefined, c.denseRank !== undefined];
        if (!tied) {
          expect(got.chunks.map(shape)).toEqual(single.chunks.map(shape));
          exact++;
        } else expectSameRanking(got.chunks, single.chunks, 30, `hybrid with ties: ${q}`);
        compared++;
      }
    }
    // Most questions have no tie among the fused scores: the exact comparison is the one that runs.
    expect(compared).toBe(sets.reduce((n, set) => n + Math.min(10, set.questions.length), 0));
    expect(exact).toBeGreaterThan(compared / 2);
  });

  it("sharded - filters by document and source rank as one store does", async () => {
    const set = sets[0]!;
    const docIds = set.docs.slice(0, 40).map((d) => d.id);
    const sources = [...new Set(set.docs.map((d) => d.source))].slice(0, 1);
    for (const q of set.questions.slice(0, 10)) {
      for (const mode of MODES) {
        for (const filter of [{ docIds, sources: [] }, { docIds: [], sources }]) {
          const hybrid = mode === RetrievalMode.RETRIEVAL_MODE_HYBRID;
          const single = (await set.single.search({ query: q, options: { k: hybrid ? 10 : 60, mode, filter }, includeQueryEmbedding: false }, signal)).chunks;
          const got = (await set.sharded.get(3)!.search({ query: q, options: { k: 10, mode, filter }, includeQueryEmbedding: false }, signal)).chunks;
          for (const c of got) expect(filter.docIds.length === 0 || docIds.includes(c.chunk!.docId)).toBe(true);
          expectSameRanking(got, single, 10, `${RetrievalMode[mode]} filtered: ${q}`);
        }
      }
    }
  });

  it("sharded - GetChunks, GetStats and DeleteDocument go to each document's shard; ranges come back in request order", async () => {
    const set = sets[0]!;
    const index = set.sharded.get(3)!;
    const ids = set.docs.slice(0, 6).map((d) => d.id);
    expect(new Set(ids.map((id) => shardOf(id, 3))).size).toBeGreaterThan(1);
    const ranges = ids.flatMap((docId) => [
      { docId, firstOrdinal: 0, lastOrdinal: 1 },
      { docId, firstOrdinal: 0, lastOrdinal: 0 },
    ]);
    expect(await index.getChunks({ ranges }, signal)).toEqual(await set.single.getChunks({ ranges }));
    const stats = await index.getStats(signal);
    const one = await set.single.getStats();
    expect({ documents: stats.documents, chunks: stats.chunks, vectors: stats.vectors, embedder: stats.embedder }).toEqual({ documents: one.documents, chunks: one.chunks, vectors: one.vectors, embedder: one.embedder });
    expect(stats.storePath).toMatch(/^shard 0: .*; shard 1: .*; shard 2: /);
    const missingDoc = await index.getChunks({ ranges: [{ docId: "no-such-doc", firstOrdinal: 0, lastOrdinal: 0 }] }, signal).catch((e: unknown) => e);
    expect((missingDoc as ServiceError).code).toBe(status.NOT_FOUND);
  });

  it("sharded - a document ingested through the sharded index lands in its shard only, and a delete removes it from the rankings", async () => {
    const set = sets[0]!;
    const index = set.sharded.get(2)!;
    const doc = { id: "shard-probe-doc", title: "probe", text: "Zyxoquartzite crystals dissolve slowly in warm zyxoquartzite solvent.", source: "probe", license: "", metadata: {} };
    // Without waiting: durable in the log, LOGGED; waiting for the shard's one replica: what it did.
    const logged = await index.ingest({ document: { ...doc, text: "first version" }, waitForReplicas: 0 }, signal);
    expect(logged.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_LOGGED);
    expect(logged.results[0]!.message).toMatch(/in the ingest log at sequence \d+/);
    const ingested = await index.ingest({ document: doc, waitForReplicas: 1 }, signal);
    expect(ingested.results[0]!.status).toBe(IngestStatus.INGEST_STATUS_REPLACED);
    const query: SearchRequest = { query: "zyxoquartzite", options: { k: 5, mode: RetrievalMode.RETRIEVAL_MODE_BM25 }, includeQueryEmbedding: false };
    expect((await index.search(query, signal)).chunks.map((c) => c.chunk!.docId)).toEqual(["shard-probe-doc"]);
    // The gateway remembers the shards' figures for "the sample crystals"; a write moves a shard on, and the next
    // search counts again: its scores are those of a gateway that never remembered anything.
    const common: SearchRequest = { query: "the sample crystals", options: { k: 10, mode: RetrievalMode.RETRIEVAL_MODE_BM25 }, includeQueryEmbedding: false };
    await index.search(common, signal);
    await index.ingest({ document: { ...doc, id: "shard-probe-2", text: "The sample crystals: more crystals, crystals again." }, waitForReplicas: 1 }, signal);
    const fresh = new ShardedNatsIndex(gatewayOf(set), 2);
    expect(await index.search(common, signal)).toEqual(await fresh.search(common, signal));
    expect((await index.search(common, signal)).chunks[0]!.chunk!.docId).toBe("shard-probe-2");
    await index.deleteDocument({ docId: "shard-probe-2", waitForReplicas: 1 }, signal);
    expect(await index.search(common, signal)).toEqual(await fresh.search(common, signal));
    const gone = await index.deleteDocument({ docId: doc.id, waitForReplicas: 0 }, signal);
    expect(gone).toEqual({ found: true, chunksDeleted: 1 });
    expect((await index.search(query, signal)).chunks).toEqual([]);
  });

  it("sharded - a store that holds one shard is refused as another, naming the shard it holds", async () => {
    const set = sets[0]!;
    const store = stores.find((st) => st.path.endsWith(`${set.name}-1-of-3`))!;
    expect(() => store.replica.claimShard(0, 3, store.path)).toThrow(/holds shard 1\/3, not 0\/3; serve it as --shard 1\/3/);
  });

  it("sharded - a shard nobody serves fails the search UNAVAILABLE naming that shard, never a partial answer", async () => {
    // Four shards expected, none serves 4-shard subjects: the first shard's failure names it and says how to start it.
    const index = new ShardedNatsIndex(gateway, 4, new ConnectionWatch(gateway));
    const err = await index.search({ query: sets[0]!.questions[0]!, options: { k: 5, mode: RetrievalMode.RETRIEVAL_MODE_DENSE }, includeQueryEmbedding: false }, signal).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceError);
    expect((err as ServiceError).code).toBe(status.UNAVAILABLE);
    expect((err as ServiceError).message).toMatch(/index shard \d of 4 is not running on NATS/);
    expect((err as ServiceError).message).toContain("--shard");
  });
});
