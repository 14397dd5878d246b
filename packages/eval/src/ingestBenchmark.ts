import { ChunkStore, startEmbedder, storeErrorAsInput } from "@attr-rag/index";
import { ingestCorpus } from "./evalInputs.js";

/** "42s", "3m07s", "1h05m": how long a run took, for progress lines. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** Ingests a benchmark's corpus into the store at `storeDir` (created if missing), reporting how long it took. */
export async function ingestBenchmark(storeDir: string, embedderSpec: string, corpusPath: string): Promise<void> {
  const embedder = await startEmbedder(embedderSpec);
  try {
    const store = await ChunkStore.open(storeDir, { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions }, embed: (t) => embedder.embed(t) }).catch((err: unknown) => {
      throw storeErrorAsInput(err);
    });
    try {
      const t0 = performance.now();
      const r = await ingestCorpus(store, embedder, corpusPath);
      if (store.stats().missingVectors > 0) await store.rebuildVectors((texts) => embedder.embed(texts));
      process.stderr.write(`eval: store ${storeDir}: ${r.written} documents embedded, ${r.unchanged} unchanged, in ${formatDuration(performance.now() - t0)}\n`);
    } finally {
      await store.close();
    }
  } finally {
    await embedder.dispose();
  }
}
