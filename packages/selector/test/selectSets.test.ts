import { status } from "@grpc/grpc-js";
import { AttributionMetric, SelectionDecision, SelectionFlag, SelectionReason, type Chunk, type ChunkSet, type GetChunksRequest, type SelectionRequest } from "@attr-rag/contracts";
import { attributionScores, cosineSimilarity, selectChunkSets, type AttributionMetric as TextMetric } from "@attr-rag/core";
import { ServiceError } from "@attr-rag/index";
import { describe, expect, it } from "vitest";
import { selectSets } from "../src/selectSets.js";
import { settingsToProto, type SelectionSettings } from "../src/selectionSettings.js";
import type { SelectorDeps } from "../src/selectorBackend.js";

const signal = new AbortController().signal;
const TEXT_METRICS: TextMetric[] = ["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"];
const SETTINGS: SelectionSettings = { metrics: TEXT_METRICS, tau: 0.05, minVotes: 3, epsilon: 0.01, maxGap: 2 };

/** A deterministic bag-of-letters embedder: similar texts get similar vectors. */
function vectorOf(text: string): Float32Array {
  const v = new Float32Array(26);
  for (const ch of text.toLowerCase()) if (ch >= "a" && ch <= "z") v[ch.charCodeAt(0) - 97]! += 1;
  const n = Math.hypot(...v) || 1;
  return v.map((x) => x / n);
}

/** The index as the selector sees it: an embedder and the chunks of one document, "doc", ordinals 0..9. */
function fakeIndex(missing: readonly number[] = []) {
  const calls: GetChunksRequest[] = [];
  const embedded: string[] = [];
  const deps: SelectorDeps = {
    async embedTexts({ texts }) {
      embedded.push(...texts);
      return { embedder: "letters-26", embeddings: texts.map((t) => ({ values: Array.from(vectorOf(t)) })) };
    },
    async getChunks(request) {
      calls.push(request);
      const r = request.ranges[0]!;
      const chunks: Chunk[] = [];
      for (let o = r.firstOrdinal; o <= r.lastOrdinal; o++) {
        if (missing.includes(o)) throw new ServiceError(status.NOT_FOUND, `document ${r.docId} not found`);
        chunks.push({ id: `${r.docId}#${o}`, docId: r.docId, ordinal: o, start: 0, end: 1, text: `gap chunk ${o}`, docTitle: "", source: "" });
      }
      return { chunks };
    },
  };
  return { deps, calls, embedded };
}

const set = (setId: string, ordinals: number[], tokenCount = 50): ChunkSet => ({
  setId,
  docId: "doc",
  firstOrdinal: ordinals[0]!,
  lastOrdinal: ordinals.at(-1)!,
  chunks: ordinals.map((o) => ({ chunkId: `doc#${o}`, ordinal: o })),
  bestRetrievalRank: 1,
  tokenCount,
});

const FULL = "Dissolve the amine in water. Add the anhydride. Heat the flask. Cool and filter the crystals.";
const ANSWERS = ["Add the anhydride. Heat the flask.", "Dissolve the amine in water. Add the anhydride. Heat the flask. Cool and filter the crystals.", "Heat the flask and cool it."];

function request(overrides: Partial<SelectionRequest> = {}): SelectionRequest {
  return {
    requestId: "r1",
    sets: [set("doc#0-0", [0]), set("doc#2-2", [2]), set("doc#7-7", [7])],
    fullAnswer: FULL,
    answers: ANSWERS.map((text, i) => ({ setIndex: i, setId: ["doc#0-0", "doc#2-2", "doc#7-7"][i]!, text, screened: false })),
    params: settingsToProto(SETTINGS),
    ...overrides,
  };
}

describe("selectSets", () => {
  it("selector - α per metric is the core's attribution (cosine through the index's embedder) and the selection follows from it", async () => {
    const { deps, embedded } = fakeIndex();
    const result = await selectSets(request(), deps, signal);
    const embeddings = { full: vectorOf(FULL), occluded: ANSWERS.map(vectorOf) };
    const expected = attributionScores({ full: FULL, occluded: ANSWERS, metrics: TEXT_METRICS, embeddings }).alphas;
    expect(result.embedder).toBe("letters-26");
    expect(new Set(embedded)).toEqual(new Set([FULL, ...ANSWERS].filter((t, i, all) => all.indexOf(t) === i)));
    expect(result.attribution!.metrics).toEqual([
      AttributionMetric.ATTRIBUTION_METRIC_COSINE,
      AttributionMetric.ATTRIBUTION_METRIC_JACCARD,
      AttributionMetric.ATTRIBUTION_METRIC_ROUGE1,
      AttributionMetric.ATTRIBUTION_METRIC_ROUGE2,
      AttributionMetric.ATTRIBUTION_METRIC_ROUGE_L,
      AttributionMetric.ATTRIBUTION_METRIC_ROUGE_LSUM,
    ]);
    result.attribution!.rows.forEach((row, j) => row.scores.forEach((s, k) => expect(s.alpha).toBe(expected[SETTINGS.metrics[k]!]![j])));
    expect(1 - cosineSimilarity(vectorOf(FULL), vectorOf(ANSWERS[1]!))).toBeCloseTo(result.attribution!.rows[1]!.scores[0]!.alpha, 12);
    const core = selectChunkSets({ sets: [0, 1, 2].map((i) => ({ id: String(i), tokens: 50 })), metrics: SETTINGS.metrics, alphas: expected }, { tau: 0.05, minVotes: 3, epsilon: 0.01 });
    const keptIds = [...core.kept].sort((a, b) => a - b).map((i) => ["doc#0-0", "doc#2-2", "doc#7-7"][i]);
    expect(result.selection!.selectedSetIds).toEqual(keptIds);
    expect(result.selection!.sets.map((s) => s.decision === SelectionDecision.SELECTION_DECISION_KEPT)).toEqual([0, 1, 2].map((i) => core.kept.includes(i)));
    // The set whose removal changed nothing (answer 1 = A_full) is not kept.
    expect(result.selection!.selectedSetIds).not.toContain("doc#2-2");
  });

  it("selector - a LOG_LIKELIHOOD column given by the caller votes beside the text metrics it computes; asked for without one it is INVALID_ARGUMENT", async () => {
    const { deps } = fakeIndex();
    const LOGLIK = AttributionMetric.ATTRIBUTION_METRIC_LOG_LIKELIHOOD;
    const ids = ["doc#0-0", "doc#2-2", "doc#7-7"];
    const loglik = [0.5, 9.0, -1.25];
    const settings: SelectionSettings = { ...SETTINGS, metrics: ["rouge1", "loglik"], minVotes: 2 };
    const table = {
      method: 2,
      metrics: [LOGLIK],
      rows: ids.map((setId, j) => ({ setIndex: j, setId, scores: [{ metric: LOGLIK, alpha: loglik[j]!, stdError: 0.1 }], loglikWithout: 10 - loglik[j]! })),
      loglikFull: 10,
      evaluations: 4,
    };
    const result = await selectSets(request({ attribution: table, params: settingsToProto(settings) }), deps, signal);
    const rouge1 = attributionScores({ full: FULL, occluded: ANSWERS, metrics: ["rouge1"] }).alphas.rouge1!;
    expect(result.attribution!.metrics).toEqual([AttributionMetric.ATTRIBUTION_METRIC_ROUGE1, LOGLIK]);
    expect(result.attribution!.method).toBe(2);
    expect(result.attribution!.loglikFull).toBe(10);
    result.attribution!.rows.forEach((row, j) => {
      expect(row.scores.map((x) => x.alpha)).toEqual([rouge1[j], loglik[j]]);
      expect(row.scores[1]!.stdError).toBe(0.1);
      expect(row.loglikWithout).toBe(10 - loglik[j]!);
    });
    const missing = selectSets(request({ params: settingsToProto(settings) }), deps, signal);
    await expect(missing).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, message: expect.stringMatching(/LOG_LIKELIHOOD .* no attribution table with it/) });
    const wrongRow = selectSets(request({ attribution: { ...table, rows: [table.rows[1]!, table.rows[0]!, table.rows[2]!] }, params: settingsToProto(settings) }), deps, signal);
    await expect(wrongRow).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it("selector - the gap between kept chunks at most max_gap apart is fetched from the index; an unreadable gap stays open with a warning", async () => {
    // α from a table (as a coalition method would give it): the first two sets are above the elbow.
    const rows = ["doc#0-0", "doc#2-2", "doc#7-7"].map((setId, j) => ({ setIndex: j, setId, scores: settingsToProto(SETTINGS).metrics.map((metric) => ({ metric, alpha: [0.9, 0.8, 0.1][j]! })) }));
    const given = request({ answers: [], attribution: { method: 1, metrics: settingsToProto(SETTINGS).metrics, rows, evaluations: 4 }, params: settingsToProto({ ...SETTINGS, minVotes: 1, tau: 0.01 }) });
    const { deps, calls } = fakeIndex();
    const result = await selectSets(given, deps, signal);
    expect(result.selection!.selectedSetIds).toEqual(["doc#0-0", "doc#2-2"]);
    expect(calls.map((c) => c.ranges)).toEqual([[{ docId: "doc", firstOrdinal: 1, lastOrdinal: 1 }]]); // kept ordinals 0 and 2: fetch 1
    expect(result.gapFill!.gaps).toEqual([{ range: { docId: "doc", firstOrdinal: 1, lastOrdinal: 1 }, beforeSetId: "doc#0-0", afterSetId: "doc#2-2", addedChunkIds: ["doc#1"] }]);
    expect(result.gapFill!.addedChunks.map((c) => c.text)).toEqual(["gap chunk 1"]);
    expect(result.attribution!.evaluations).toBe(4);
    expect(result.embedder).toBe(""); // nothing was embedded

    const open = await selectSets(given, fakeIndex([1]).deps, signal);
    expect(open.gapFill!.gaps).toEqual([]);
    expect(open.warnings).toContain("gap fill: chunks 1..1 of doc are no longer in the store (the document changed); the gap was left open");
  });

  it("selector - min_votes above the metric count is capped with a warning; malformed requests are INVALID_ARGUMENT", async () => {
    const capped = await selectSets(request({ params: settingsToProto({ ...SETTINGS, metrics: ["jaccard", "rouge1"], minVotes: 3 }) }), fakeIndex().deps, signal);
    expect(capped.warnings).toContain("min_votes 3 is more than the 2 metrics; used 2");
    const cases: [Partial<SelectionRequest>, RegExp][] = [
      [{ params: undefined }, /params is missing/],
      [{ params: { ...settingsToProto(SETTINGS), metrics: [] } }, /params\.metrics is empty/],
      [{ sets: [] }, /sets is empty/],
      [{ answers: ANSWERS.slice(0, 2).map((text, i) => ({ setIndex: i, setId: "x", text, screened: false })) }, /2 answers for 3 sets/],
      [{ params: { ...settingsToProto(SETTINGS), metrics: [99 as AttributionMetric] } }, /99 is not an attribution metric/],
    ];
    for (const [overrides, message] of cases) {
      const err = await selectSets(request(overrides), fakeIndex().deps, signal).catch((e: unknown) => e);
      expect(err, String(message)).toBeInstanceOf(ServiceError);
      expect((err as ServiceError).code).toBe(status.INVALID_ARGUMENT);
      expect((err as ServiceError).message).toMatch(message);
    }
  });

  it("selector - a set the screen strategy did not regenerate scores α = 0 on every metric and is dropped as SCREENED, flagged and warned", async () => {
    const measured = await selectSets(request(), fakeIndex().deps, signal);
    expect(measured.attribution!.rows[2]!.scores.every((s) => s.alpha > 0)).toBe(true);
    const screened = request();
    screened.answers[2] = { ...screened.answers[2]!, screened: true, screenDrop: 0.0104 };
    const result = await selectSets(screened, fakeIndex().deps, signal);
    expect(result.attribution!.rows[2]!.scores.map((s) => s.alpha)).toEqual(TEXT_METRICS.map(() => 0));
    // The other rows are what they were.
    expect(result.attribution!.rows.slice(0, 2)).toEqual(measured.attribution!.rows.slice(0, 2));
    const row = result.selection!.sets[2]!;
    expect(row).toMatchObject({ decision: SelectionDecision.SELECTION_DECISION_DROPPED, reason: SelectionReason.SELECTION_REASON_SCREENED });
    expect(row.reasonText).toMatch(/screened out .*fell 0\.010 nats.*α = 0 on every metric/);
    expect(result.selection!.flags).toContain(SelectionFlag.SELECTION_FLAG_SCREENED);
    expect(result.selection!.summary).toMatch(/1 of 3 sets screened out/);
    expect(result.warnings.some((w) => /approximate: 1 of 3 sets were screened out/.test(w))).toBe(true);
    expect(measured.selection!.flags).not.toContain(SelectionFlag.SELECTION_FLAG_SCREENED);

    const outside = request();
    outside.answers[0] = { ...outside.answers[0]!, setIndex: 5, screened: true };
    await expect(selectSets(outside, fakeIndex().deps, signal)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, message: expect.stringMatching(/screened answer for set index 5/) });
  });
});
