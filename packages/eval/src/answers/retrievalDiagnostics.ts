// Fig. 1 (b): how many gold chunks plain retrieval finds at k = 5 … 30, and what share of the context they
// are, per retrieval mode. Gold chunks come from the gold documents' spans (core's goldChunkIds).
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import { goldAtCutoffs, goldChunkIds, locateSpan } from "@attr-rag/core";
import type { ChunkStore, Embedder } from "@attr-rag/index";
import type { BenchmarkQuestion } from "./benchmark.js";

export const DIAGNOSTIC_KS = [5, 10, 15, 20, 25, 30] as const;
export const DIAGNOSTIC_MODES = ["dense", "bm25", "hybrid"] as const;
export type DiagnosticMode = (typeof DIAGNOSTIC_MODES)[number];

export interface RetrievalDiagnostics {
  /** Questions with gold documents present in the store (the means are over these). */
  readonly questions: number;
  /** Mean number of gold chunks per question (what a perfect retriever could find). */
  readonly mean_gold_chunks: number;
  /** Gold spans found in none of their question's gold documents (their steps count nowhere). */
  readonly unlocated_spans: number;
  /** mode → k → mean gold chunks retrieved and mean density (gold / k). */
  readonly modes: Record<DiagnosticMode, Record<string, { readonly gold: number; readonly density: number }>>;
}

/** Texts of the documents in `ids`, streamed from the corpus (only those are kept in memory). */
async function documentTexts(corpusPath: string, ids: ReadonlySet<string>): Promise<Map<string, string>> {
  const texts = new Map<string, string>();
  const rl = createInterface({ input: createReadStream(corpusPath, { encoding: "utf8" }), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of rl) {
    if (line.trim() === "") continue;
    const doc = JSON.parse(line) as { id?: unknown; text?: unknown };
    if (typeof doc.id === "string" && ids.has(doc.id) && typeof doc.text === "string") texts.set(doc.id, doc.text);
  }
  return texts;
}

export async function retrievalDiagnostics(
  store: ChunkStore,
  embedder: Embedder,
  questions: readonly BenchmarkQuestion[],
  corpusPath: string,
): Promise<RetrievalDiagnostics | undefined> {
  const withGold = questions.filter((q) => q.goldDocIds.some((id) => store.getDocument(id) !== undefined));
  if (withGold.length === 0) return undefined;
  const texts = await documentTexts(corpusPath, new Set(withGold.flatMap((q) => q.goldDocIds)));
  let unlocated = 0;
  const gold = withGold.map((q) => {
    const ids = new Set<string>();
    const docTexts = q.goldDocIds.map((id) => texts.get(id) ?? "");
    unlocated += q.goldSpans.filter((span) => docTexts.every((t) => locateSpan(t, span) === undefined)).length;
    for (const docId of q.goldDocIds) {
      const doc = store.getDocument(docId);
      const text = texts.get(docId);
      if (doc === undefined || text === undefined) continue;
      const chunks = store.getChunks(docId, 0, Math.max(0, doc.chunkCount - 1));
      for (const id of goldChunkIds(text, chunks, q.goldSpans)) ids.add(id);
    }
    return ids;
  });
  const deepest = DIAGNOSTIC_KS[DIAGNOSTIC_KS.length - 1]!;
  const vectors = await embedder.embed(withGold.map((q) => q.question));
  const modes = {} as RetrievalDiagnostics["modes"];
  for (const mode of DIAGNOSTIC_MODES) {
    const sums = Object.fromEntries(DIAGNOSTIC_KS.map((k) => [String(k), { gold: 0, density: 0 }]));
    withGold.forEach((q, i) => {
      const hits =
        mode === "bm25"
          ? store.searchBm25(q.question, { k: deepest })
          : mode === "dense"
            ? store.searchDense(vectors[i]!, { k: deepest })
            : store.searchHybrid(q.question, vectors[i]!, { k: deepest });
      const at = goldAtCutoffs(
        hits.map((h) => h.chunkId),
        gold[i]!,
        DIAGNOSTIC_KS,
      );
      for (const k of DIAGNOSTIC_KS) {
        sums[String(k)]!.gold += at[String(k)]!.gold;
        sums[String(k)]!.density += at[String(k)]!.density;
      }
    });
    modes[mode] = Object.fromEntries(Object.entries(sums).map(([k, s]) => [k, { gold: s.gold / withGold.length, density: s.density / withGold.length }]));
  }
  return { questions: withGold.length, mean_gold_chunks: gold.reduce((s, g) => s + g.size, 0) / withGold.length, unlocated_spans: unlocated, modes };
}
