import { describe, expect, it } from "vitest";
import {
  AskEvent,
  AttributionMethod,
  AttributionMetric,
  CitationKind,
  FinishReason,
  OcclusionJob,
  RetrievalMode,
  RetrievalOptions,
  SelectionDecision,
  SelectionFlag,
  SelectionReason,
  type AskEventCase,
  type AskEventOf,
  type DeepPartial,
} from "../src/index.js";

/** A populated payload per AskEvent stage; `satisfies` makes a missing or misspelt stage a compile error. */
const STAGES = {
  retrieved: {
    chunks: [
      {
        chunk: { id: "d1#57", docId: "d1", ordinal: 57, start: 1000, end: 1900, text: "Dissolve 3 g", docTitle: "Acetaminophen", source: "chemex" },
        score: 0.83,
        rank: 1,
        denseRank: 1,
        bm25Rank: 4,
        denseScore: 0.83,
        bm25Score: 12.5,
      },
    ],
    mode: RetrievalMode.RETRIEVAL_MODE_HYBRID,
    embedder: "use-lite",
  },
  aligned: {
    sets: [
      {
        setId: "d1:57-58",
        docId: "d1",
        firstOrdinal: 57,
        lastOrdinal: 58,
        chunks: [
          { chunkId: "d1#57", ordinal: 57, retrievalRank: 1 },
          { chunkId: "d1#58", ordinal: 58, retrievalRank: 29 },
        ],
        bestRetrievalRank: 1,
        tokenCount: 420,
      },
    ],
  },
  reranked: { sets: [{ setId: "d1:57-58", score: 4.2, alignedIndex: 3 }], reranker: "fallback:bi-encoder", fallback: true },
  initialAnswerDelta: { text: "Step 1", finishReason: FinishReason.FINISH_REASON_UNSPECIFIED },
  occlusionProgress: {
    done: 2,
    total: 5,
    finished: [{ setIndex: 1, setId: "d2:3-3", tokenCount: 120, divergedAt: 7, answerText: "Step one" }],
  },
  attribution: {
    method: AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION,
    metrics: [AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD],
    rows: [
      {
        setIndex: 0,
        setId: "d1:57-58",
        scores: [
          { metric: AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, alpha: 0.41 },
          { metric: AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD, alpha: 12.75, stdError: 0.5 },
        ],
        loglikWithout: -88.5,
      },
    ],
    loglikFull: -75.75,
    evaluations: 6,
  },
  selection: {
    params: { tau: 0.05, minVotes: 3, epsilon: 0.01, maxGap: 2, metrics: [AttributionMetric.ATTRIBUTION_METRIC_ROUGE1] },
    bestSetId: "d1:57-58",
    sets: [
      {
        setIndex: 0,
        setId: "d1:57-58",
        decision: SelectionDecision.SELECTION_DECISION_KEPT,
        reason: SelectionReason.SELECTION_REASON_BEST_SET,
        reasonText: "kept: best set",
        votes: 1,
        argmaxVotes: 1,
        meanAlpha: 0.41,
        metricVotes: [{ metric: AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, rank: 1, dropToNext: 0.3, voted: true, argmax: true }],
      },
    ],
    cuts: [{ metric: AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, largestDrop: 0.3, setsAbove: 1, aboveTau: true, argmaxSetId: "d1:57-58" }],
    flags: [SelectionFlag.SELECTION_FLAG_MIN_VOTES_CAPPED],
    selectedSetIds: ["d1:57-58"],
    summary: "1 of 1 sets kept",
  },
  gapFill: {
    gaps: [
      {
        range: { docId: "d1", firstOrdinal: 59, lastOrdinal: 59 },
        beforeSetId: "d1:57-58",
        afterSetId: "d1:60-60",
        addedChunkIds: ["d1#59"],
      },
    ],
    addedChunks: [{ id: "d1#59", docId: "d1", ordinal: 59, start: 2800, end: 3500, text: "Filter", docTitle: "", source: "" }],
  },
  finalAnswerDelta: { text: " done.", finishReason: FinishReason.FINISH_REASON_STOP },
  finalAnswer: {
    text: "Step 1 done.",
    citations: [{ start: 0, end: 6, chunkIds: ["d1#57"], kind: CitationKind.CITATION_KIND_MARKER }],
    contextChunkIds: ["d1#57", "d1#58", "d1#59"],
  },
  done: {
    timings: { retrieveMs: 3.5, occlusionMs: 1200.25, totalMs: 1500 },
    counters: { promptTokens: 9000, tokensEvaluated: 2500, tokensReused: 6500, draftTokensProposed: 900, draftTokensAccepted: 800, decodeSteps: 40, sequences: 6, nearTies: 1, elapsedMs: 1100.5, strategy: 4 },
    warnings: ["re-ranker: bi-encoder fallback"],
  },
} satisfies { [C in AskEventCase]: DeepPartial<AskEventOf<C>> };

function eventOf(stage: AskEventCase, sequence: number): AskEvent {
  // TypeScript cannot correlate `stage` with `STAGES[stage]`; the satisfies clause above checked each pair.
  const partial = { requestId: "req-1", sequence, elapsedMs: 12.5, stage: { $case: stage, value: STAGES[stage] } };
  return AskEvent.fromPartial(partial as DeepPartial<AskEvent>);
}

const CASES = Object.keys(STAGES) as AskEventCase[];

describe("codec", () => {
  it("codec - covers all 11 AskEvent stages", () => {
    expect(CASES).toHaveLength(11);
  });

  it.each(CASES)("codec - AskEvent %s survives a binary round trip", (stage) => {
    const event = eventOf(stage, 4);
    const bytes = AskEvent.encode(event).finish();
    const decoded = AskEvent.decode(bytes);
    expect(decoded.stage?.$case).toBe(stage);
    expect(decoded).toEqual(event);
    // the payload is on the wire, not just defaults
    expect(bytes.length).toBeGreaterThan(AskEvent.encode({ ...event, stage: undefined }).finish().length + 2);
  });

  it.each(CASES)("codec - AskEvent %s survives a JSON round trip", (stage) => {
    const event = eventOf(stage, 4);
    const json = JSON.parse(JSON.stringify(AskEvent.toJSON(event))) as unknown;
    expect(AskEvent.fromJSON(json)).toEqual(event);
  });

  it("codec - proto3 optional keeps an explicit zero apart from unset", () => {
    const zero = RetrievalOptions.decode(RetrievalOptions.encode({ k: 0, mode: RetrievalMode.RETRIEVAL_MODE_DENSE }).finish());
    const unset = RetrievalOptions.decode(RetrievalOptions.encode({ mode: RetrievalMode.RETRIEVAL_MODE_DENSE }).finish());
    expect(zero.k).toBe(0);
    expect(unset.k).toBeUndefined();
  });

  it("codec - OcclusionJob round trip keeps text and token segments, indices and an int64 deadline as a number", () => {
    const deadline = 1_900_000_000_123; // > 2^32: exercises int64 with forceLong=number
    const job = OcclusionJob.fromPartial({
      jobId: "job-7",
      requestId: "req-1",
      model: "qwen2-7b-instruct-q4_k_m",
      prompt: {
        prefix: { content: { $case: "text", value: "<|im_start|>system\nYou answer.<|im_end|>\n" } },
        sets: [
          { setId: "d1:57-58", segment: { content: { $case: "text", value: "[1] Dissolve 3 g of p-aminophenol" } } },
          { setId: "d2:3-3", segment: { content: { $case: "tokens", value: { ids: [151644, 8948, -1, 0, 2147483647] } } } },
        ],
        suffix: { content: { $case: "text", value: "Explain all steps.<|im_end|>\n<|im_start|>assistant\n" } },
      },
      generation: { maxTokens: 512, strategy: 3 },
      occludeSetIndices: [0, 1],
      fullAnswerTokens: { ids: [1, 2, 3] },
      deadlineUnixMs: deadline,
      streamProgress: true,
    });
    const decoded = OcclusionJob.decode(OcclusionJob.encode(job).finish());
    expect(decoded).toEqual(job);
    expect(typeof decoded.deadlineUnixMs).toBe("number");
    expect(decoded.deadlineUnixMs).toBe(deadline);
    expect(decoded.prompt?.sets[1]?.segment?.content).toEqual({ $case: "tokens", value: { ids: [151644, 8948, -1, 0, 2147483647] } });
  });
});
