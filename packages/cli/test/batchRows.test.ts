import { AttributionMethod, EngineStrategy, RetrievalMode } from "@attr-rag/contracts";
import { describe, expect, it } from "vitest";
import { batchItemsFromJsonl, defaultsFromFlags, ROW_FIELDS } from "../src/batch/batchRows.js";
import { resultRow } from "@attr-rag/batch";

describe("batch rows", () => {
  it("batch rows - the command's flags are every row's defaults; a row's own fields win", () => {
    const text = ['{"id": "a", "question": "Q1"}', '{"id": "b", "question": "Q2", "k": 4, "max_tokens": "7", "mode": "bm25", "method": "shapley", "include_occluded": true}', ""].join("\n");
    const items = batchItemsFromJsonl(text, "rows.jsonl", defaultsFromFlags({ k: "9", maxTokens: "11", strategy: "naive", server: "ignored" }));
    expect(items.map((i) => i.itemId)).toEqual(["a", "b"]);
    const [a, b] = items.map((i) => i.request!);
    expect(a).toMatchObject({ question: "Q1", retrieval: { k: 9 }, generation: { maxTokens: 11, strategy: EngineStrategy.ENGINE_STRATEGY_NAIVE }, includeOccludedAnswers: false });
    expect(b).toMatchObject({
      question: "Q2",
      retrieval: { k: 4, mode: RetrievalMode.RETRIEVAL_MODE_BM25 },
      generation: { maxTokens: 7, strategy: EngineStrategy.ENGINE_STRATEGY_NAIVE },
      attribution: { method: AttributionMethod.ATTRIBUTION_METHOD_SHAPLEY_EXACT },
      includeOccludedAnswers: true,
    });
  });

  it("batch rows - sentence attribution per row: off with sentences false, its threshold; a non-boolean is named", () => {
    const text = '{"id": "a", "question": "Q", "sentences": false}\n{"id": "b", "question": "Q", "sentence_threshold": 0.5}\n';
    const [a, b] = batchItemsFromJsonl(text, "rows.jsonl", defaultsFromFlags({ sentences: true })).map((i) => i.request!);
    expect(a!.attribution).toMatchObject({ sentences: false });
    expect(b!.attribution!.sentences).toBeUndefined();
    expect(b!.attribution).toMatchObject({ sentenceThreshold: 0.5 });
    expect(() => batchItemsFromJsonl('{"id": "c", "question": "Q", "sentences": "no"}\n', "rows.jsonl", {})).toThrow(/rows\.jsonl:1: field "sentences" must be true or false/);
  });

  it("batch rows - OpenAI Batch input lines are our rows: custom_id is the id, body the fields; a bad method or url names the line", () => {
    const ours = '{"id": "q1", "question": "Q1", "max_tokens": 7}\n{"id": "q2", "question": "Q2", "k": 3}\n';
    const openai =
      '{"custom_id": "q1", "method": "POST", "url": "/v1/ask", "body": {"question": "Q1", "max_tokens": 7}}\n' +
      '{"custom_id": "q2", "method": "POST", "url": "/v1/ask", "body": {"question": "Q2", "k": 3}}\n';
    const defaults = defaultsFromFlags({ k: "9" });
    expect(batchItemsFromJsonl(openai, "in.jsonl", defaults)).toEqual(batchItemsFromJsonl(ours, "rows.jsonl", defaults));
    // Both shapes may share a file.
    expect(batchItemsFromJsonl(ours.split("\n")[0] + "\n" + openai.split("\n")[1] + "\n", "mixed.jsonl", defaults).map((i) => i.itemId)).toEqual(["q1", "q2"]);
    const bad = (line: string) => () => batchItemsFromJsonl(`${ours.split("\n")[0]}\n${line}\n`, "in.jsonl", defaults);
    expect(bad('{"custom_id": "x", "method": "GET", "url": "/v1/ask", "body": {"question": "Q"}}')).toThrow(/^in\.jsonl:2: field "method" must be "POST".*got "GET"; nothing was submitted$/);
    expect(bad('{"custom_id": "x", "method": "POST", "url": "/v1/chat/completions", "body": {"question": "Q"}}')).toThrow(/^in\.jsonl:2: field "url" must be "\/v1\/ask".*got "\/v1\/chat\/completions"/);
    expect(bad('{"custom_id": "x", "method": "POST", "url": "/v1/ask", "body": {"question": "Q", "temperature": 0}}')).toThrow(/^in\.jsonl:2: unknown field "temperature"/);
    expect(bad('{"custom_id": "", "method": "POST", "url": "/v1/ask", "body": {"question": "Q"}}')).toThrow(/^in\.jsonl:2: field "custom_id" must be a non-empty string/);
    expect(bad('{"custom_id": "x", "method": "POST", "url": "/v1/ask", "body": "Q"}')).toThrow(/^in\.jsonl:2: field "body" must be an object/);
    expect(bad('{"custom_id": "x", "method": "POST", "url": "/v1/ask", "body": {"question": "Q"}, "extra": 1}')).toThrow(/^in\.jsonl:2: unknown field "extra" in an OpenAI-shaped line/);
  });

  it("batch rows - every row field is an ask flag, named in snake_case", () => {
    for (const [field, key] of Object.entries(ROW_FIELDS)) expect(field).toBe(key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  });

  it("batch rows - a result row has the documented fields; a failed item says why", () => {
    const ok = resultRow({
      batchId: "b",
      itemId: "a",
      index: 0,
      offset: 0,
      state: 3,
      statusCode: 0,
      statusMessage: "",
      question: "Q",
      requestId: "r",
      finalAnswer: {
        text: "Heat it [1].",
        citations: [{ start: 0, end: 12, chunkIds: ["d#0"], kind: 1 }],
        contextChunkIds: ["d#0"],
        sentences: { setIds: ["[1]"], threshold: 1, setChunks: [{ chunkIds: ["d#0"] }], sentences: [{ start: 0, end: 12, tokens: 4, logProbFull: -3, logProbNoContext: -9, drops: [5.5], topSets: [0], supported: true }] },
      },
      initialAnswer: "Mix. Heat.",
      sets: [{ setId: "d#0-0", docId: "d", firstOrdinal: 0, lastOrdinal: 0, chunks: [{ chunkId: "d#0", ordinal: 0, retrievalRank: 1 }], bestRetrievalRank: 1 }],
      attribution: {
        method: 0,
        metrics: [1, 5],
        rows: [{ setIndex: 0, setId: "d#0-0", scores: [{ metric: 1, alpha: 0.5 }, { metric: 5, alpha: 0.25 }] }],
        evaluations: 2,
        sentences: { setIds: ["d#0-0"], threshold: 1, setChunks: [], sentences: [{ start: 5, end: 10, tokens: 2, logProbFull: -2, logProbNoContext: -2.1, drops: [0.2], topSets: [], supported: false }] },
      },
      selection: { bestSetId: "d#0-0", sets: [{ setIndex: 0, setId: "d#0-0", decision: 1, reason: 1, reasonText: "kept as S*", votes: 2, argmaxVotes: 2, meanAlpha: 0.375, metricVotes: [] }], cuts: [], flags: [], selectedSetIds: ["d#0-0"], summary: "" },
      done: { timings: { totalMs: 12.5, retrieveMs: 1 }, warnings: ["w"] },
      attempts: 1,
      finishedUnixMs: 5,
    });
    expect(Object.keys(ok)).toEqual(["id", "question", "status", "answer", "citations", "sentences", "kept_sets", "attribution", "timings", "counters", "warnings"]);
    // Which set shaped which sentence: the final answer's against its blocks, A_full's (its text is the initial answer) against the sets.
    expect(ok.sentences).toEqual({ set_ids: ["[1]"], threshold: 1, sentences: [{ start: 0, end: 12, text: "Heat it [1].", drops: [5.5], supported_by: ["[1]"], log_prob_full: -3, log_prob_no_context: -9 }] });
    expect(ok.attribution!.sentences!.sentences).toEqual([{ start: 5, end: 10, text: "Heat.", drops: [0.2], supported_by: [], log_prob_full: -2, log_prob_no_context: -2.1 }]);
    expect(ok).toMatchObject({
      id: "a",
      status: "ok",
      answer: "Heat it [1].",
      citations: [{ start: 0, end: 12, chunk_ids: ["d#0"], kind: "marker" }],
      kept_sets: [{ set_id: "d#0-0", doc_id: "d", chunk_ids: ["d#0"], reason: "best_set", reason_text: "kept as S*" }],
      attribution: { method: "occlusion", metrics: ["cosine", "rougeL"], rows: [{ set_id: "d#0-0", alpha: { cosine: 0.5, rougeL: 0.25 } }] },
      timings: { total_ms: 12.5, retrieve_ms: 1 },
      warnings: ["w"],
    });
    const failed = resultRow({ batchId: "b", itemId: "x", index: 1, offset: 1, state: 4, statusCode: 3, statusMessage: "question is empty", question: "", requestId: "", sets: [], attempts: 1, finishedUnixMs: 6, initialAnswer: "" });
    expect(failed).toMatchObject({ id: "x", status: "INVALID_ARGUMENT", error: "question is empty", answer: "", kept_sets: [], attribution: null, sentences: null });
  });
});
