// `attr-rag bench shards`: one index process over one store against the same documents split into shards or
// copied into replicas (real `attr-rag index serve` processes on a real nats-server), for query latency and
// queries/s, the merge's overhead, whether the sharded rankings equal the single store's, and ingest through the
// log.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RetrievalMode, type ScoredChunk, type SearchRequest } from "@attr-rag/contracts";
import { shardOf } from "@attr-rag/core";
import { ChunkStore, NatsIndex, readDocuments, ShardedNatsIndex, snapshotStore, type RemoteIndex } from "@attr-rag/index";
import { connectNats, startNatsServer } from "@attr-rag/nats";
import { ClusterProcess } from "@attr-rag/cluster";

export interface ShardBenchOptions {
  /** .jsonl corpora (all ingested into every configuration). */
  readonly corpora: readonly string[];
  /** Questions, cycled for the timed queries; every one is compared (sharded vs one store). */
  readonly questions: readonly string[];
  readonly embedderPath: string;
  /** Timed queries per configuration, mode and client count. */
  readonly queries: number;
  readonly clients: readonly number[];
  /** Documents ingested through the log for the ingest rate. */
  readonly ingestDocuments: number;
  readonly k: number;
  readonly onProgress: (line: string) => void;
}

const MODES = { bm25: RetrievalMode.RETRIEVAL_MODE_BM25, dense: RetrievalMode.RETRIEVAL_MODE_DENSE, hybrid: RetrievalMode.RETRIEVAL_MODE_HYBRID } as const;
type ModeName = keyof typeof MODES;

interface Config {
  readonly name: "one store" | "1 shard × 1 replica" | "2 shards" | "1 shard × 2 replicas";
  /** Stores per shard (each a replica). */
  readonly stores: readonly (readonly string[])[];
  /** Served unsharded (`index serve --nats`, the gateway's NatsIndex). */
  readonly unsharded?: boolean;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function ingestStore(store: string, corpora: readonly string[], embedderPath: string, shard?: string): Promise<void> {
  const p = ClusterProcess.spawn(`ingest ${store}`, ["ingest", ...corpora, "--store", store, "--embedder", `gguf:${embedderPath}`, "--json", ...(shard !== undefined ? ["--shard", shard] : [])]);
  await p.exited;
  if (p.child.exitCode !== 0) throw new Error(`attr-rag ingest into ${store} failed:\n${p.stderr}`);
}

const near = (a: number, b: number) => Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * Whether two top-k lists rank alike: the same score at every position (1e-9, relative), and the same chunks
 * in each run of equal scores, in any order (one store orders a tie by insertion, a merge by shard); a run the
 * cut at k splits may hold different members of the tie. `unreached` counts, when they differ, the chunks one
 * list holds that the other lacks although their score would place them inside its top k: a vector its
 * approximate (HNSW) search did not reach, which an exhaustive search over the same vectors would have.
 */
export function compareRankings(a: readonly ScoredChunk[], b: readonly ScoredChunk[], k: number): { equal: boolean; unreached: number } {
  const unreached = (x: readonly ScoredChunk[], y: readonly ScoredChunk[]) => {
    const ids = new Set(y.map((c) => c.chunk!.id));
    const floor = y.length < k ? -Infinity : y[y.length - 1]!.score;
    return x.filter((c) => !ids.has(c.chunk!.id) && c.score > floor && !near(c.score, floor)).length;
  };
  const missed = unreached(a, b) + unreached(b, a);
  if (a.length !== b.length) return { equal: false, unreached: missed };
  for (let i = 0; i < a.length; ) {
    let j = i + 1;
    while (j < a.length && near(a[j]!.score, a[i]!.score)) j++;
    for (let at = i; at < j; at++) if (!near(a[at]!.score, b[at]!.score)) return { equal: false, unreached: missed };
    const cut = j === a.length && a.length === k;
    if (!cut) {
      const run = new Set(a.slice(i, j).map((c) => c.chunk!.id));
      if (!b.slice(i, j).every((c) => run.has(c.chunk!.id))) return { equal: false, unreached: missed };
    }
    i = j;
  }
  return { equal: true, unreached: 0 };
}

export async function runShardBench(o: ShardBenchOptions) {
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-bench-shards-"));
  try {
    o.onProgress("ingesting the corpus into one store and into 2 shards (attr-rag ingest, --shard 0/2 and 1/2)");
    const all = join(dir, "all");
    await Promise.all([ingestStore(all, o.corpora, o.embedderPath), (async () => {
      await ingestStore(join(dir, "s0"), o.corpora, o.embedderPath, "0/2");
      await ingestStore(join(dir, "s1"), o.corpora, o.embedderPath, "1/2");
    })()]);
    for (const copy of ["one-1", "rep-1", "rep-2"]) await snapshotStore(all, join(dir, copy));
    const configs: Config[] = [
      { name: "one store", stores: [[all]], unsharded: true },
      { name: "1 shard × 1 replica", stores: [[join(dir, "one-1")]] },
      { name: "2 shards", stores: [[join(dir, "s0")], [join(dir, "s1")]] },
      { name: "1 shard × 2 replicas", stores: [[join(dir, "rep-1"), join(dir, "rep-2")]] },
    ];
    const latency: { config: string; mode: ModeName; clients: number; p50_ms: number; p99_ms: number; queries_per_s: number }[] = [];
    const compared: Record<string, Record<ModeName, { equal: number; differ: number; unreached: number }>> = {};
    let reference: Map<string, ScoredChunk[]> | undefined;
    for (const config of configs) {
      await using server = await startNatsServer();
      const processes: ClusterProcess[] = [];
      try {
        config.stores.forEach((replicas, shard) =>
          replicas.forEach((store, r) =>
            processes.push(
              ClusterProcess.spawn(`index ${shard}.${r}`, ["index", "serve", "--store", store, "--port", "0", "--nats", server.url, "--embedder", `gguf:${o.embedderPath}`, "--embed-threads", "1", ...(config.unsharded ? [] : ["--shard", `${shard}/${config.stores.length}`])]),
            ),
          ),
        );
        for (const p of processes) await p.waitFor(/serving the index.* on NATS/, 120_000);
        const nc = await connectNats({ url: server.url, name: "bench-shards" });
        try {
          const index: RemoteIndex = config.unsharded ? new NatsIndex(nc) : new ShardedNatsIndex(nc, config.stores.length);
          const signal = new AbortController().signal;
          const ask = (q: string, mode: ModeName, k = o.k) => index.search({ query: q, options: { k, mode: MODES[mode] }, includeQueryEmbedding: false } satisfies SearchRequest, signal);
          o.onProgress(`${config.name}: comparing ${o.questions.length} questions × 3 modes`);
          const answers = new Map<string, ScoredChunk[]>();
          for (const mode of Object.keys(MODES) as ModeName[]) for (const q of o.questions) answers.set(`${mode}\u0000${q}`, (await ask(q, mode)).chunks);
          if (reference === undefined) reference = answers;
          else {
            const counts = { bm25: { equal: 0, differ: 0, unreached: 0 }, dense: { equal: 0, differ: 0, unreached: 0 }, hybrid: { equal: 0, differ: 0, unreached: 0 } };
            for (const [key, chunks] of answers) {
              const c = counts[key.split("\u0000")[0] as ModeName];
              const { equal, unreached } = compareRankings(chunks, reference.get(key)!, o.k);
              c[equal ? "equal" : "differ"]++;
              c.unreached += unreached;
            }
            compared[config.name] = counts;
          }
          for (const mode of Object.keys(MODES) as ModeName[]) {
            for (const clients of o.clients) {
              for (let i = 0; i < 20; i++) await ask(o.questions[i % o.questions.length]!, mode);
              const times: number[] = [];
              let next = 0;
              const started = performance.now();
              await Promise.all(
                Array.from({ length: clients }, async () => {
                  while (next < o.queries) {
                    const i = next++;
                    const t = performance.now();
                    await ask(o.questions[i % o.questions.length]!, mode);
                    times.push(performance.now() - t);
                  }
                }),
              );
              const wall = performance.now() - started;
              times.sort((a, b) => a - b);
              latency.push({ config: config.name, mode, clients, p50_ms: percentile(times, 0.5), p99_ms: percentile(times, 0.99), queries_per_s: (o.queries / wall) * 1000 });
              o.onProgress(`${config.name}, ${mode}, ${clients} client(s): p50 ${percentile(times, 0.5).toFixed(1)} ms, ${((o.queries / wall) * 1000).toFixed(0)} queries/s`);
            }
          }
        } finally {
          await nc.close();
        }
      } finally {
        await Promise.all(processes.map((p) => p.stop("SIGTERM")));
      }
    }
    const ingest = await ingestRate(o, dir);
    const p50 = (config: string, mode: ModeName) => latency.find((l) => l.config === config && l.mode === mode && l.clients === 1)!.p50_ms;
    const overhead = Object.fromEntries((Object.keys(MODES) as ModeName[]).map((m) => [m, { "2 shards": p50("2 shards", m) / p50("one store", m) - 1, "1 shard × 1 replica": p50("1 shard × 1 replica", m) / p50("one store", m) - 1 }]));
    return { latency, merge_overhead_p50_1_client: overhead, compared, ingest, goals: { merge_overhead: 0.2 } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * The ingest log into 2 shards × 2 replicas, written twice: with the vectors in the entries (made once, by the
 * replica of the document's shard that prepares it) and without (every replica embeds what it applies, as an
 * older writer's log). Each time the documents are logged while one replica per shard runs, then a second,
 * empty replica per shard is started and catches up: its apply rate is the log's rate alone. The two replicas
 * of each shard are compared at the end, row by row and vector by vector.
 */
async function ingestRate(o: ShardBenchOptions, dir: string) {
  const docs: { id: string; text: string; title: string; source: string }[] = [];
  for await (const item of readDocuments([...o.corpora])) {
    if (docs.length === o.ingestDocuments) break;
    docs.push({ id: item.document.id, text: item.document.text, title: item.document.title ?? "", source: item.document.source ?? "" });
  }
  const vectors = await ingestOnce(o, dir, docs, true);
  const embedding = await ingestOnce(o, dir, docs, false);
  return { documents: docs.length, shards: 2, replicas: 2, vectors_in_log: vectors, replicas_embed: embedding, apply_speedup: vectors.applied_per_s_per_replica / embedding.applied_per_s_per_replica };
}

async function ingestOnce(o: ShardBenchOptions, dir: string, docs: readonly { id: string; text: string; title: string; source: string }[], vectorsAtWriter: boolean) {
  const tag = vectorsAtWriter ? "vectors" : "embed";
  await using server = await startNatsServer();
  const processes: ClusterProcess[] = [];
  const replica = (shard: number, r: number) => {
    const p = ClusterProcess.spawn(`ingest index ${shard}.${r}`, ["index", "serve", "--store", join(dir, `log-${tag}-${shard}-${r}`), "--create", "--port", "0", "--nats", server.url, "--shard", `${shard}/2`, "--embedder", `gguf:${o.embedderPath}`, "--embed-threads", "1"]);
    processes.push(p);
    return p;
  };
  const nc = await connectNats({ url: server.url, name: "bench-shards-ingest" });
  try {
    for (const p of [replica(0, 0), replica(1, 0)]) await p.waitFor(/serving the index.* on NATS/, 120_000);
    o.onProgress(`ingest (${vectorsAtWriter ? "vectors in the log" : "replicas embed"}): ${docs.length} documents through the log into 2 shards`);
    const index = new ShardedNatsIndex(nc, 2, undefined, 60_000, { vectorsAtWriter });
    const signal = new AbortController().signal;
    const request = (d: (typeof docs)[number], wait: number) => ({ document: { ...d, license: "", metadata: {} }, waitForReplicas: wait });
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < docs.length) await index.ingest(request(docs[next++]!, 0), signal);
    }));
    const logged = performance.now() - started;
    // Each shard's last document again, waiting for its replica: applied in log order, so all are applied then.
    for (const shard of [0, 1]) {
      const last = docs.findLast((d) => shardOf(d.id, 2) === shard);
      if (last !== undefined) await index.ingest(request(last, 1), signal);
    }
    o.onProgress(`ingest (${vectorsAtWriter ? "vectors in the log" : "replicas embed"}): a second, empty replica per shard catches up`);
    const late = [replica(0, 1), replica(1, 1)];
    const rates = [];
    for (const p of late) {
      const [, entries, seconds] = await p.waitFor(/caught up with the ingest log of shard \d\/2 at sequence \d+ \(applied (\d+) entries in ([\d.]+) s/, 600_000);
      rates.push({ entries: Number(entries), seconds: Number(seconds) });
      // Stopped only once it listens: a SIGTERM during start-up ends the process before it saves its vectors.
      await p.waitFor(/listening on /, 60_000);
    }
    const perReplica = rates.map((r) => r.entries / r.seconds);
    return {
      logged_per_s: (docs.length / logged) * 1000,
      applied_per_s_per_replica: perReplica.reduce((a, b) => a + b, 0) / perReplica.length,
      catch_up: rates,
      identical: await Promise.all(processes.map((p) => p.stop("SIGTERM"))).then(async () => {
        for (const shard of [0, 1]) {
          const ids = docs.filter((d) => shardOf(d.id, 2) === shard).map((d) => d.id);
          if (!(await sameStore(join(dir, `log-${tag}-${shard}-0`), join(dir, `log-${tag}-${shard}-1`), ids))) return false;
        }
        return true;
      }),
    };
  } finally {
    await nc.close();
    await Promise.all(processes.map((p) => p.stop("SIGTERM")));
  }
}

/**
 * Whether two stopped replicas hold the same documents (every row field), chunks and vectors. The vector
 * index has no read-back, so vectors are compared through exact scores: every chunk's cosine against fixed
 * probes, to the last bit.
 */
async function sameStore(a: string, b: string, ids: readonly string[]): Promise<boolean> {
  const stores = await Promise.all([ChunkStore.open(a), ChunkStore.open(b)]);
  try {
    const [x, y] = stores.map((s) => {
      const rows = ids.map((id) => [s.getDocument(id), s.getDocument(id) === undefined ? [] : s.getChunks(id, 0, Number.MAX_SAFE_INTEGER)]);
      const chunks = s.stats().chunks;
      const scores = [0, 1, 2].map((p) => {
        const probe = Float32Array.from({ length: s.embedder.dimensions }, (_, i) => Math.sin(i * (p + 1) + p));
        return chunks === 0 ? [] : s.searchDense(probe, { k: chunks }).map((h) => [h.chunkId, h.score]).sort();
      });
      return JSON.stringify({ rows, chunks, scores });
    });
    return x === y;
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
}
