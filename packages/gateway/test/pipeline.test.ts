import { AskRequest, Baseline, CitationKind, EngineStrategy, FinishReason, SelectionDecision, type AnswerDelta, type OcclusionProgress, SelectionFlag, SelectionReason, type AskEvent, type AskEventOf } from "@attr-rag/contracts";
import { RESERVED_CONTEXT_MARK } from "@attr-rag/core";
import { status } from "@grpc/grpc-js";
import { basename } from "node:path";
import { AbortError, ensureSynthModel } from "@attr-rag/engine";
import { ChunkStore, UseLiteEmbedder } from "@attr-rag/index";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, runAsk } from "../src/index.js";
import { attributeSets } from "../src/pipeline/attributeSets.js";
import { resolveSelection } from "../src/pipeline/resolveAsk.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";

function stage<C extends "attribution" | "selection" | "reranked" | "done" | "finalAnswer">(events: readonly AskEvent[], c: C): AskEventOf<C> {
  return events.find((e) => e.stage?.$case === c)!.stage!.value as AskEventOf<C>;
}

describe("gateway pipeline (embedded)", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  let runtime: Runtime;

  beforeAll(async () => {
    store = await buildDemoStore();
    // A stored document holding the prompt layout's reserved marker (it must not fail the questions that find it).
    const embedder = new UseLiteEmbedder();
    const writable = await ChunkStore.open(store.dir, { embedder: { id: embedder.id, dimensions: embedder.dimensions } });
    await writable.upsertDocument({ id: "odd-doc", text: `Recrystallize the crude acetaminophen from hot water.${RESERVED_CONTEXT_MARK} Dry it on filter paper.` }, (t) => embedder.embed(t));
    await writable.close();
    await embedder.dispose();
    // 8,192 cells over 4 sequences: each prompt gets 2,048 tokens, far fewer than twelve chunk sets need.
    runtime = await Runtime.open(testConfig(store.dir, { contextSize: 8192, sequences: 4 }));
  });
  afterAll(async () => {
    await runtime?.dispose();
    store?.remove();
  });

  it("pipeline - sets that do not fit the context window are dropped lowest-ranked first and explained", async () => {
    const events: AskEvent[] = [];
    await runAsk(runtime, AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 12, mode: 0 } }), (e) => events.push(e), new AbortController().signal);
    const reranked = stage(events, "reranked").sets.map((s) => s.setId);
    const attributed = stage(events, "attribution").rows.map((r) => r.setId);
    expect(attributed.length).toBeGreaterThan(0);
    expect(attributed.length).toBeLessThan(reranked.length);
    expect(attributed).toEqual(reranked.slice(0, attributed.length));
    const selection = stage(events, "selection");
    expect(selection.flags).toContain(SelectionFlag.SELECTION_FLAG_TRUNCATED_BY_CONTEXT_WINDOW);
    // Every re-ranked set has a decision: the ones that did not fit say so.
    expect(selection.sets.map((s) => s.setId)).toEqual(reranked);
    for (const s of selection.sets.slice(attributed.length)) {
      expect(s).toMatchObject({ decision: SelectionDecision.SELECTION_DECISION_DROPPED, reason: SelectionReason.SELECTION_REASON_CONTEXT_WINDOW });
    }
    expect(stage(events, "done").warnings.some((w) => w.startsWith("context window:"))).toBe(true);
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });

  for (const strategy of ["naive", "prefix-shared", "speculative"] as const) {
    it(`pipeline - ${strategy}: A_full's deltas add up to it, the last says why it stopped, and progress follows them`, async () => {
      const order: string[] = [];
      const deltas: AnswerDelta[] = [];
      const progress: OcclusionProgress[] = [];
      const sets = ["Weigh 2.00 g of p-aminophenol.", "Add 2.2 mL of acetic anhydride.", "Heat at 85 °C for 15 minutes.", "Once upon a time there was a cat."].map((text, i) => ({ id: String(i), text }));
      const result = await attributeSets(
        runtime,
        { question: QUESTION, sets, generation: { maxTokens: 20, strategy }, selection: resolveSelection(undefined, runtime.config), attribution: { method: "occlusion" }, sentences: { enabled: true, threshold: 1 }, includeOccludedAnswers: true, dropSetsThatDoNotFit: false },
        {
          onInitialDelta: (d) => (order.push("delta"), deltas.push(d)),
          onProgress: (p) => (order.push("progress"), progress.push(p)),
        },
        new AbortController().signal,
      );
      expect(deltas.map((d) => d.text).join("")).toBe(result.initialAnswer);
      expect(deltas.slice(0, -1).every((d) => d.finishReason === FinishReason.FINISH_REASON_UNSPECIFIED)).toBe(true);
      expect(deltas.at(-1)!.finishReason).toBe(FinishReason.FINISH_REASON_LENGTH);
      expect(order.lastIndexOf("delta")).toBeLessThan(order.indexOf("progress"));
      expect(progress.map((p) => p.done)).toEqual([1, 2, 3, 4, 4]);
      expect(progress.at(-1)!.finished.map((f) => f.setId)).toEqual(["0", "1", "2", "3"]);
      // Sentence-level attribution of A_full rides on the same job: every sentence, each set's drop.
      const sentences = result.table.sentences!;
      expect(sentences.setIds).toEqual(["0", "1", "2", "3"]);
      expect(sentences.sentences.length).toBeGreaterThan(0);
      for (const x of sentences.sentences) {
        expect(result.initialAnswer.slice(x.start, x.end).trim()).toBe(result.initialAnswer.slice(x.start, x.end));
        expect(x.drops).toHaveLength(4);
        expect(x.tokens).toBeGreaterThan(0);
        expect(x.logProbFull).toBeLessThan(0);
        expect(x.supported).toBe(x.topSets.length > 0);
        for (const j of x.topSets) expect(x.drops[j]!).toBeGreaterThan(sentences.threshold);
      }
    });
  }

  it("pipeline - sentence-level attribution: the final answer against its own blocks, ATTRIBUTION citations of their chunks; off when the request says so", async () => {
    const run = async (attribution?: Partial<NonNullable<AskRequest["attribution"]>>) => {
      const events: AskEvent[] = [];
      await runAsk(runtime, AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 4, mode: 0 }, generation: { maxTokens: 16 }, ...(attribution ? { attribution } : {}) }), (e) => events.push(e), new AbortController().signal);
      return events;
    };
    const events = await run(undefined);
    const final = stage(events, "finalAnswer");
    const sentences = final.sentences!;
    expect(sentences.threshold).toBe(1);
    expect(sentences.setIds.every((id, i) => id === `[${i + 1}]`)).toBe(true);
    expect(sentences.sentences.length).toBeGreaterThan(0);
    for (const x of sentences.sentences) expect(x.drops).toHaveLength(sentences.setIds.length);
    const cited = final.citations.filter((c) => c.kind === CitationKind.CITATION_KIND_ATTRIBUTION);
    // Each supported sentence cites; every cited chunk is in the final context.
    expect(cited.map((c) => c.start)).toEqual(sentences.sentences.filter((x) => x.supported).map((x) => x.start));
    for (const c of cited) {
      expect(c.chunkIds.every((id) => final.contextChunkIds.includes(id))).toBe(true);
      expect(c.score!).toBeGreaterThan(1);
    }
    expect(stage(events, "attribution").sentences!.sentences.length).toBeGreaterThan(0);

    // A threshold of 0 makes every set that raised a sentence at all support it.
    const loose = stage(await run({ sentenceThreshold: 0 }), "finalAnswer").sentences!;
    expect(loose.threshold).toBe(0);
    for (const x of loose.sentences) expect(x.supported).toBe(x.drops.some((d) => d > 0));

    const off = await run({ sentences: false });
    expect(stage(off, "finalAnswer").sentences).toBeUndefined();
    expect(stage(off, "attribution").sentences).toBeUndefined();
    expect(stage(off, "finalAnswer").citations.every((c) => c.kind !== CitationKind.CITATION_KIND_ATTRIBUTION)).toBe(true);
    await expect(run({ sentenceThreshold: -1 })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it("pipeline - screen: the screened sets keep A_full, score α = 0 and are dropped as SCREENED; the counters and warnings say approximate", async () => {
    const events: AskEvent[] = [];
    const request = AskRequest.fromPartial({
      question: QUESTION,
      retrieval: { k: 6, mode: 0 },
      generation: { maxTokens: 16, strategy: EngineStrategy.ENGINE_STRATEGY_SCREEN, screen: { topK: 2 } },
      includeOccludedAnswers: true,
    });
    await runAsk(runtime, request, (e) => events.push(e), new AbortController().signal);
    const done = stage(events, "done");
    expect(done.occlusionCounters!.strategy).toBe(EngineStrategy.ENGINE_STRATEGY_SCREEN);
    const finished = events.flatMap((e) => (e.stage?.$case === "occlusionProgress" ? e.stage.value.finished : []));
    const attribution = stage(events, "attribution");
    expect(finished).toHaveLength(attribution.rows.length);
    expect(attribution.rows.length).toBeGreaterThan(2);
    const screened = finished.filter((f) => f.screened);
    expect(screened).toHaveLength(attribution.rows.length - 2);
    const full = events.filter((e) => e.stage?.$case === "initialAnswerDelta").map((e) => (e.stage!.value as AnswerDelta).text).join("");
    for (const f of finished) expect(f.screenDrop).toBeTypeOf("number");
    // The two regenerated sets dropped log P(A_full) the most.
    const regeneratedDrops = finished.filter((f) => !f.screened).map((f) => f.screenDrop!);
    for (const f of screened) {
      expect(f.answerText).toBe(full);
      expect(f.divergedAt).toBeUndefined();
      expect(Math.min(...regeneratedDrops)).toBeGreaterThanOrEqual(f.screenDrop!);
      const row = attribution.rows.find((r) => r.setId === f.setId)!;
      expect(row.scores.every((s) => s.alpha === 0)).toBe(true);
    }
    const selection = stage(events, "selection");
    expect(selection.flags).toContain(SelectionFlag.SELECTION_FLAG_SCREENED);
    // A dropped screened set is dropped *because* it was screened; a kept one (possible through the fallback)
    // keeps its own reason. Both branches are asserted, and the test needs at least one dropped.
    const decisions = screened.map((f) => selection.sets.find((x) => x.setId === f.setId)!);
    for (const s of decisions) {
      const dropped = s.decision === SelectionDecision.SELECTION_DECISION_DROPPED;
      expect(s.reason === SelectionReason.SELECTION_REASON_SCREENED, `${s.setId}: decision ${s.decision}, reason ${s.reason}`).toBe(dropped);
      expect(s.reasonText).toMatch(/screened out by the approximate screen strategy/);
    }
    expect(decisions.some((s) => s.decision === SelectionDecision.SELECTION_DECISION_DROPPED)).toBe(true);
    expect(done.warnings.some((w) => w.startsWith("approximate:"))).toBe(true);
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });

  it("pipeline - stored text holding the prompt's reserved marker is stripped, not fatal", async () => {
    const events: AskEvent[] = [];
    const request = AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 1, mode: 0, filter: { docIds: ["odd-doc"], sources: [] } } });
    await runAsk(runtime, request, (e) => events.push(e), new AbortController().signal);
    expect(stage(events, "finalAnswer").contextChunkIds).toEqual(["odd-doc#0"]);
  });

  it("pipeline - an aborted ask stops with the abort and leaves the engine free", async () => {
    const controller = new AbortController();
    const events: AskEvent[] = [];
    const run = runAsk(
      runtime,
      AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 4, mode: 0 }, generation: { maxTokens: 300, strategy: 0 } }),
      (e) => {
        events.push(e);
        if (e.stage?.$case === "initialAnswerDelta") controller.abort(new Error("stop"));
      },
      controller.signal,
    );
    // The engine's own AbortError (its native job stopped), not some other failure on the way out.
    await expect(run).rejects.toBeInstanceOf(AbortError);
    await expect(run).rejects.toThrow(/was aborted/);
    expect(events.some((e) => e.stage?.$case === "done")).toBe(false);
    expect(runtime.generator.sequencesInUse()).toBe(0);
  });
  // Last: the store admits one open runtime at a time, so this closes the shared one.
  it("pipeline - a GGUF cross-encoder re-ranks: the reranked event names it, no fallback, no fallback warning", async () => {
    const request = AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 6, mode: 0 }, generation: { maxTokens: 8, strategy: 0 } });
    // Without a cross-encoder the sets are re-ranked by the bi-encoder, and every result says so.
    const fallbackEvents: AskEvent[] = [];
    await runAsk(runtime, request, (e) => fallbackEvents.push(e), new AbortController().signal);
    const fallback = stage(fallbackEvents, "reranked");
    expect(fallback).toMatchObject({ reranker: "fallback:bi-encoder", fallback: true });
    expect(stage(fallbackEvents, "done").warnings.some((w) => w.includes("fallback:bi-encoder"))).toBe(true);
    await runtime.dispose();

    // A synthetic bert re-ranker with a classification head (models synth --preset reranker-tiny).
    const { path } = await ensureSynthModel("reranker-tiny");
    const withReranker = await Runtime.open(testConfig(store.dir, { reranker: path }));
    try {
      const events: AskEvent[] = [];
      await runAsk(withReranker, request, (e) => events.push(e), new AbortController().signal);
      const reranked = stage(events, "reranked");
      expect(reranked.reranker).toBe(`gguf:${basename(path)}`);
      expect(reranked.fallback).toBe(false);
      const scores = reranked.sets.map((s) => s.score);
      expect(scores).toEqual([...scores].sort((a, b) => b - a));
      expect(stage(events, "done").warnings.filter((w) => /re-ranker|fallback/i.test(w))).toEqual([]);
      expect(stage(events, "attribution").rows.map((r) => r.setId)).toEqual(reranked.sets.map((s) => s.setId));
      // Same sets, other scores: the cross-encoder's, not the bi-encoder's.
      expect(reranked.sets.map((s) => s.setId).sort()).toEqual(fallback.sets.map((s) => s.setId).sort());
      const byId = new Map(fallback.sets.map((s) => [s.setId, s.score]));
      expect(reranked.sets.some((s) => Math.abs(s.score - byId.get(s.setId)!) > 1e-6)).toBe(true);

      // The rerank baseline scores single chunks with the same cross-encoder.
      const baseline: AskEvent[] = [];
      await runAsk(withReranker, AskRequest.fromPartial({ ...request, baseline: { baseline: Baseline.BASELINE_RERANK, k: 3 } }), (e) => baseline.push(e), new AbortController().signal);
      expect(stage(baseline, "reranked")).toMatchObject({ reranker: `gguf:${basename(path)}`, fallback: false });
    } finally {
      await withReranker.dispose();
    }
  });
});
