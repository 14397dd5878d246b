import { counter, gauge, histogram, MetricSources, SECONDS_BUCKETS } from "@attr-rag/telemetry";
/** What a scrape reads of a store (ChunkStore.stats), named here so this file does not import the store. */
interface CountedStore {
  stats(): { documents: number; chunks: number; vectors: number };
}

/** Stores served by this process (an `index serve`, or the store an embedded gateway opened). */
export const storeSources = new MetricSources<CountedStore>(() => {
  storeGauge("attr_rag_index_documents", "Documents in the stores this process serves (GetStats's documents).", (s) => s.documents);
  storeGauge("attr_rag_index_chunks", "Chunks in the stores this process serves (GetStats's chunks).", (s) => s.chunks);
  storeGauge("attr_rag_index_vectors", "Chunk vectors in the dense indexes of the stores this process serves.", (s) => s.vectors);
  ingestedChunks();
});

function storeGauge(name: string, help: string, read: (s: ReturnType<CountedStore["stats"]>) => number): void {
  gauge({
    name,
    help,
    collect() {
      let n = 0;
      for (const store of storeSources.items) {
        try {
          n += read(store.stats());
        } catch {
          // a store closed between its registration and this scrape counts nothing
        }
      }
      this.set(n);
    },
  });
}

const searchSeconds = () =>
  histogram({
    name: "attr_rag_index_search_duration_seconds",
    help: "Time a search took in this process's store (query embedding included), by mode (bm25, dense, hybrid) and scope (store, shard).",
    labelNames: ["mode", "scope"],
    buckets: SECONDS_BUCKETS,
  });

export function observeSearch(mode: string, scope: "store" | "shard", seconds: number): void {
  searchSeconds().observe({ mode, scope }, seconds);
}

const ingestedChunks = () =>
  counter({ name: "attr_rag_index_ingested_chunks_total", help: "Chunks written to the stores of this process (new and replaced documents); rate() is ingest chunks per second." });
const ingestedDocuments = () =>
  counter({ name: "attr_rag_index_ingested_documents_total", help: "Documents ingested by this process's stores, by outcome (indexed, replaced, unchanged, updated).", labelNames: ["status"] });

export function countIngested(results: readonly { status: string; chunkCount: number }[]): void {
  for (const r of results) {
    ingestedDocuments().inc({ status: r.status });
    if (r.status === "indexed" || r.status === "replaced") ingestedChunks().inc(r.chunkCount);
  }
}
