import {
  AskEvent,
  AttributionMethod,
  AttributionMetric,
  AttributionTable,
  Chunk,
  ChunkSetsAligned,
  CitationKind,
  Done,
  EngineStrategy,
  FinalAnswer,
  GapFill,
  Retrieved,
  RetrievalMode,
  SelectionDecision,
  SelectionExplanation,
  SelectionFlag,
  SelectionReason,
  SetsReranked,
  type AskEventStage,
} from "@attr-rag/contracts";
import { answerSentences } from "@attr-rag/core";
import { describe, expect, it } from "vitest";
import { alphaScale } from "../src/report/alphaScale.js";
import { renderReport } from "../src/report/renderReport.js";

// A realistic 4-set Attr-RAG run: one document split over three sets (one of them filled by gap fill), a lab
// note, and a junk page whose text tries to inject markup.

const QUESTION = "How do I prepare the glassy-carbon electrode before step 3?";
const M = AttributionMetric;
const METRICS = [
  M.ATTRIBUTION_METRIC_COSINE,
  M.ATTRIBUTION_METRIC_JACCARD,
  M.ATTRIBUTION_METRIC_ROUGE1,
  M.ATTRIBUTION_METRIC_ROUGE2,
  M.ATTRIBUTION_METRIC_ROUGE_L,
  M.ATTRIBUTION_METRIC_ROUGE_LSUM,
];
const METRIC_NAMES = ["cosine", "jaccard", "rouge1", "rouge2", "rougeL", "rougeLsum"];
const HOSTILE_TEXT = "<script>alert(1)</script> & co";

function chunk(docId: string, ordinal: number, text: string): Chunk {
  return Chunk.fromPartial({ id: `${docId}#${ordinal}`, docId, ordinal, start: ordinal * 100, end: ordinal * 100 + text.length, text, docTitle: `${docId} title` });
}

const CHUNKS = {
  polish: chunk("protocol-7", 10, "Polish the electrode with 0.05 µm 𝛼-alumina for 60 s."),
  rinse: chunk("protocol-7", 11, "Rinse with deionised water & sonicate for 2 min."),
  dry: chunk("protocol-7", 12, "Dry under a stream of nitrogen."),
  passivate: chunk("protocol-7", 13, "Passivate in 0.5 M H2SO4 by cycling 20 times between -0.2 and 1.2 V."),
  note: chunk("notes-2", 3, "Lab note: older electrodes need 40 cycles."),
  junk: chunk("misc-9", 0, HOSTILE_TEXT),
};

const A = "protocol-7:13-13";
const B = "protocol-7:10-11";
const C = "notes-2:3-3";
const D = "misc-9:0-0";
/** Re-rank order, which is also the order of the attribution rows. */
const RERANK_ORDER = [A, B, D, C];

/** α per set in METRICS order; cosine may exceed 1 and a near-zero one comes out negative from rounding. */
const ALPHAS: Record<string, number[]> = {
  [A]: [1.42, 0.61, 0.55, 0.71, 0.58, 0.6],
  [B]: [0.83, 0.42, 0.38, 0.52, 0.4, 0.41],
  [D]: [0.02, 0.01, 0, 0.015, 0.012345, 0.01],
  [C]: [-0.0004, 0.05, 0.06, 0.09, 0.05, 0.04],
};

const REASONS: Record<string, string> = {
  [A]: "kept: best set S* (argmax of 6 of 6 metrics)",
  [B]: "kept: selected by 6 of 6 metrics (min 3)",
  [D]: "dropped: selected by 0 of 6 metrics (min 3)",
  [C]: "dropped: selected by 1 of 6 metrics (min 3)",
};

const ANSWER = "Polish with 𝛼-alumina, rinse with water & sonicate [1]. Then passivate in 0.5 M H2SO4 with 20 cycles [2]. Older electrodes may need more.";
const SPAN_1 = "Polish with 𝛼-alumina, rinse with water & sonicate";
const SPAN_2 = "passivate in 0.5 M H2SO4 with 20 cycles";

function stream(stages: AskEventStage[]): AskEvent[] {
  return stages.map((stage, i) => AskEvent.fromPartial({ requestId: "req-42", sequence: i, elapsedMs: i * 100, stage }));
}

function retrieved(): AskEventStage {
  const ranked = [CHUNKS.passivate, CHUNKS.polish, CHUNKS.note, CHUNKS.rinse, CHUNKS.junk];
  return {
    $case: "retrieved",
    value: Retrieved.fromPartial({
      chunks: ranked.map((c, i) => ({ chunk: c, score: 0.9 - i * 0.1, rank: i + 1 })),
      mode: RetrievalMode.RETRIEVAL_MODE_DENSE,
      embedder: "gguf:bge-small",
    }),
  };
}

function aligned(): AskEventStage {
  return {
    $case: "aligned",
    value: ChunkSetsAligned.fromPartial({
      sets: [
        { setId: A, docId: "protocol-7", firstOrdinal: 13, lastOrdinal: 13, bestRetrievalRank: 1, chunks: [{ chunkId: CHUNKS.passivate.id, ordinal: 13, retrievalRank: 1 }] },
        {
          setId: B,
          docId: "protocol-7",
          firstOrdinal: 10,
          lastOrdinal: 11,
          bestRetrievalRank: 2,
          tokenCount: 41,
          chunks: [
            { chunkId: CHUNKS.polish.id, ordinal: 10, retrievalRank: 2 },
            { chunkId: CHUNKS.rinse.id, ordinal: 11, retrievalRank: 4 },
          ],
        },
        { setId: C, docId: "notes-2", firstOrdinal: 3, lastOrdinal: 3, bestRetrievalRank: 3, chunks: [{ chunkId: CHUNKS.note.id, ordinal: 3, retrievalRank: 3 }] },
        { setId: D, docId: "misc-9", firstOrdinal: 0, lastOrdinal: 0, bestRetrievalRank: 5, chunks: [{ chunkId: CHUNKS.junk.id, ordinal: 0, retrievalRank: 5 }] },
      ],
    }),
  };
}

function reranked(fallback = false): AskEventStage {
  const alignedIndex: Record<string, number> = { [A]: 0, [B]: 1, [C]: 2, [D]: 3 };
  return {
    $case: "reranked",
    value: SetsReranked.fromPartial({
      sets: RERANK_ORDER.map((setId, i) => ({ setId, score: 5 - i, alignedIndex: alignedIndex[setId]! })),
      reranker: fallback ? "fallback:bi-encoder" : "gguf:bge-reranker-v2-m3",
      fallback,
    }),
  };
}

function attribution(metrics = METRICS, alphas = ALPHAS, order = RERANK_ORDER): AskEventStage {
  return {
    $case: "attribution",
    value: AttributionTable.fromPartial({
      method: AttributionMethod.ATTRIBUTION_METHOD_OCCLUSION,
      metrics,
      rows: order.map((setId, i) => ({ setIndex: i, setId, scores: metrics.map((metric, m) => ({ metric, alpha: alphas[setId]![m]! })) })),
      evaluations: order.length,
    }),
  };
}

function selection(): AskEventStage {
  const kept = new Set([A, B]);
  const votes: Record<string, number> = { [A]: 6, [B]: 6, [D]: 0, [C]: 1 };
  return {
    $case: "selection",
    value: SelectionExplanation.fromPartial({
      params: { tau: 0.05, minVotes: 3, epsilon: 0.01, maxGap: 2, metrics: METRICS },
      bestSetId: A,
      sets: RERANK_ORDER.map((setId, i) => ({
        setIndex: i,
        setId,
        decision: kept.has(setId) ? SelectionDecision.SELECTION_DECISION_KEPT : SelectionDecision.SELECTION_DECISION_DROPPED,
        reason:
          setId === A ? SelectionReason.SELECTION_REASON_BEST_SET : kept.has(setId) ? SelectionReason.SELECTION_REASON_ENOUGH_VOTES : SelectionReason.SELECTION_REASON_TOO_FEW_VOTES,
        reasonText: REASONS[setId]!,
        votes: votes[setId]!,
        argmaxVotes: setId === A ? 6 : 0,
        meanAlpha: ALPHAS[setId]!.reduce((a, b) => a + b, 0) / 6,
        metricVotes: METRICS.map((metric, m) => ({ metric, rank: i + 1, dropToNext: 0.1, voted: kept.has(setId) || (setId === C && m === 3), argmax: setId === A })),
      })),
      cuts: METRICS.map((metric) => ({ metric, largestDrop: 0.4, setsAbove: 2, aboveTau: true, argmaxSetId: A })),
      flags: [SelectionFlag.SELECTION_FLAG_BEST_SET_TIE_BROKEN],
      selectedSetIds: [A, B],
      summary: "Kept 2 of 4 sets: S* protocol-7:13-13 and one set with enough votes.",
    }),
  };
}

function gapFill(): AskEventStage {
  return {
    $case: "gapFill",
    value: GapFill.fromPartial({
      gaps: [{ range: { docId: "protocol-7", firstOrdinal: 12, lastOrdinal: 12 }, beforeSetId: B, afterSetId: A, addedChunkIds: [CHUNKS.dry.id] }],
      addedChunks: [CHUNKS.dry],
    }),
  };
}

function finalAnswer(): AskEventStage[] {
  const s1 = ANSWER.indexOf(SPAN_1);
  const s2 = ANSWER.indexOf(SPAN_2);
  return [
    { $case: "finalAnswerDelta", value: { text: ANSWER.slice(0, 20), finishReason: 0 } },
    { $case: "finalAnswerDelta", value: { text: ANSWER.slice(20), finishReason: 0 } },
    {
      $case: "finalAnswer",
      value: FinalAnswer.fromPartial({
        text: ANSWER,
        citations: [
          { start: s1, end: s1 + SPAN_1.length, chunkIds: [CHUNKS.polish.id, CHUNKS.rinse.id], kind: CitationKind.CITATION_KIND_MARKER },
          { start: s2, end: s2 + SPAN_2.length, chunkIds: [CHUNKS.passivate.id], kind: CitationKind.CITATION_KIND_SIMILARITY, score: 0.87 },
        ],
        contextChunkIds: [CHUNKS.polish.id, CHUNKS.rinse.id, CHUNKS.dry.id, CHUNKS.passivate.id],
      }),
    },
  ];
}

function done(warnings: string[] = [], strategy = EngineStrategy.ENGINE_STRATEGY_SPECULATIVE): AskEventStage {
  return {
    $case: "done",
    value: Done.fromPartial({
      timings: { retrieveMs: 12.34, alignMs: 0.5, rerankMs: 80, initialAnswerMs: 900, occlusionMs: 2400, attributionMs: 30, selectionMs: 1, gapFillMs: 3, finalAnswerMs: 950, totalMs: 4377.84 },
      counters: { promptTokens: 9000, tokensEvaluated: 4321, tokensReused: 6543, decodeSteps: 777, sequences: 6 },
      occlusionCounters: { tokensEvaluated: 2100, tokensReused: 6000, decodeSteps: 400, sequences: 4, strategy },
      warnings,
    }),
  };
}

function fullRun(options: { fallback?: boolean; warnings?: string[]; strategy?: EngineStrategy } = {}): AskEvent[] {
  return stream([
    retrieved(),
    aligned(),
    reranked(options.fallback),
    { $case: "initialAnswerDelta", value: { text: "Polish, rinse, passivate.", finishReason: 0 } },
    attribution(),
    selection(),
    gapFill(),
    ...finalAnswer(),
    done(options.warnings, options.strategy),
  ]);
}

const GENERATED_AT = new Date("2025-01-02T03:04:05Z");

function render(events: AskEvent[], question = QUESTION): string {
  return renderReport({ question, events, generatedAt: GENERATED_AT });
}

function escaped(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;");
}

function unescaped(html: string): string {
  return html.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, "&");
}

interface Bar {
  set: string;
  metric: string;
  alpha: string;
  y: number;
  height: number;
}

function bars(html: string): Bar[] {
  return [...html.matchAll(/<rect class="bar"([^>]*)>/g)].map((m) => {
    const attr = (name: string) => unescaped(new RegExp(` ${name}="([^"]*)"`).exec(m[1]!)![1]!);
    return { set: attr("data-set"), metric: attr("data-metric"), alpha: attr("data-alpha"), y: Number(attr("y")), height: Number(attr("height")) };
  });
}

/** The <article> block of one chunk set. */
function setArticle(html: string, setId: string): string {
  const start = html.indexOf(`<article class="set`, html.indexOf(`data-set="${escaped(setId)}">`) - 60);
  expect(start).toBeGreaterThanOrEqual(0);
  return html.slice(start, html.indexOf("</article>", start));
}

describe("renderReport", () => {
  it("report - is a self-contained HTML5 document", () => {
    const html = render(fullRun());
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html.trimEnd().endsWith("</html>")).toBe(true);
    expect(html.toLowerCase()).not.toContain("<script");
    expect(html).not.toContain("http://");
    expect(html).not.toContain("https://");
    expect(html).not.toMatch(/<link|<img|<iframe|\ssrc=|url\(/i);
    expect(html).toContain("<style>");
    expect(html).toContain("<svg");
    expect(html).toContain("2025-01-02T03:04:05.000Z");
  });

  it("report - header shows question, request id, reranker and retrieval mode", () => {
    const html = render(fullRun(), "Is 0.5 M <H2SO4> & water enough?");
    expect(html).toContain("Is 0.5 M &lt;H2SO4&gt; &amp; water enough?");
    expect(html).not.toContain("<H2SO4>");
    expect(html).toContain("req-42");
    expect(html).toContain("gguf:bge-reranker-v2-m3");
    expect(html).toMatch(/dense, embedder gguf:bge-small, 5 chunks/);
    expect(html).toContain("Attr-RAG");
  });

  it("report - escapes chunk text", () => {
    const html = render(fullRun());
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; co");
    expect(html).not.toContain(HOSTILE_TEXT);
    expect(html).toContain("deionised water &amp; sonicate");
  });

  it("report - escapes ids inside attributes", () => {
    const evil = `x"><b onmouseover='1'>`;
    const html = render(stream([attribution(METRICS, { [evil]: [0.5, 0.4, 0.3, 0.2, 0.1, 0] }, [evil])]));
    expect(html).not.toContain("<b onmouseover");
    expect(html).toContain(`data-set="x&quot;&gt;&lt;b onmouseover=&#39;1&#39;&gt;"`);
    expect(bars(html).every((b) => b.set === evil)).toBe(true);
  });

  it("report - the chart has one bar per set and metric with the exact α, grouped in re-rank order", () => {
    const html = render(fullRun());
    const found = bars(html);
    expect(found).toHaveLength(RERANK_ORDER.length * METRICS.length);
    const expected = RERANK_ORDER.flatMap((set) => METRIC_NAMES.map((metric, m) => ({ set, metric, alpha: String(ALPHAS[set]![m]) })));
    expect(found.map(({ set, metric, alpha }) => ({ set, metric, alpha }))).toEqual(expected);
    expect(html).toContain("<title>set protocol-7:13-13 cosine α=1.420</title>");
    expect(html).toContain("<title>set misc-9:0-0 rougeL α=0.012</title>");
    // Every metric has a legend entry and its own colour.
    const fills = new Set(found.map((b) => /fill="([^"]+)"/.exec(html.slice(html.indexOf(`data-metric="${b.metric}"`)))![1]));
    expect(fills.size).toBe(METRICS.length);
    for (const name of METRIC_NAMES) expect(html).toContain(`class="legend">${name}</text>`);
  });

  it("report - the α axis covers cosine above 1 and negative log-likelihood α", () => {
    const metrics = [M.ATTRIBUTION_METRIC_COSINE, M.ATTRIBUTION_METRIC_LOG_LIKELIHOOD];
    const alphas = { s1: [1.8, 3.25], s2: [0.2, -2.5] };
    const html = render(stream([attribution(metrics, alphas, ["s1", "s2"])]));
    const found = bars(html);
    expect(found.map((b) => `${b.set}/${b.metric}=${b.alpha}`)).toEqual(["s1/cosine=1.8", "s1/log-likelihood=3.25", "s2/cosine=0.2", "s2/log-likelihood=-2.5"]);
    // The zero line is the dark horizontal rule; positive bars end on it, negative ones start on it.
    const zero = Number(/<line x1="\d+" x2="[\d.]+" y1="([\d.]+)" y2="\1" stroke="#333333"\/>/.exec(html)![1]);
    const [s1cos, s1ll, , s2ll] = found;
    expect(s1cos!.y + s1cos!.height).toBeCloseTo(zero, 1);
    expect(s2ll!.y).toBeCloseTo(zero, 1);
    // Heights are proportional to |α| on one shared axis.
    expect(s1ll!.height / s2ll!.height).toBeCloseTo(3.25 / 2.5, 2);
    const scale = alphaScale([1.8, 3.25, 0.2, -2.5]);
    expect(scale.min).toBeLessThanOrEqual(-2.5);
    expect(scale.max).toBeGreaterThanOrEqual(3.25);
    expect(scale.ticks).toContain(0);
    // Data inside 0..1 still gets the full 0..1 axis.
    expect(alphaScale([0.02, 0.1])).toMatchObject({ min: 0, max: 1 });
  });

  it("report - kept sets are marked kept and dropped ones show their reason_text", () => {
    const html = render(fullRun());
    for (const id of [A, B]) {
      const block = setArticle(html, id);
      expect(block).toMatch(/^<article class="set kept"/);
      expect(block).toContain(`<span class="badge kept">kept</span>`);
      expect(block).toContain(escaped(REASONS[id]!));
    }
    for (const id of [C, D]) {
      const block = setArticle(html, id);
      expect(block).toMatch(/^<article class="set dropped"/);
      expect(block).toContain(`<span class="badge dropped">dropped</span>`);
      expect(block).toContain(escaped(REASONS[id]!));
    }
    // Kept sets are listed first, each group in re-rank order.
    const order = [...html.matchAll(/<article class="set[^"]*" data-set="([^"]+)"/g)].map((m) => m[1]);
    expect(order).toEqual([A, B, D, C]);
    // The selection table carries the same decisions and reasons.
    const droppedRow = /<tr class="dropped">(.*?)<\/tr>/.exec(html.slice(html.indexOf('id="selection"')))![1]!;
    expect(droppedRow).toContain(D);
    expect(droppedRow).toContain(escaped(REASONS[D]!));
    expect(droppedRow).toContain("0 of 6");
    // The chart marks exactly the kept groups.
    expect(html.match(/class="marker kept"/g)).toHaveLength(2);
    expect(html.match(/class="marker dropped"/g)).toHaveLength(2);
    expect(html).toContain("Kept 2 of 4 sets");
    expect(html).toContain("best set tie broken");
  });

  it("report - set blocks show member chunk texts, document and re-rank position", () => {
    const block = setArticle(render(fullRun()), B);
    expect(block).toContain(escaped(CHUNKS.polish.text));
    expect(block).toContain(escaped(CHUNKS.rinse.text));
    expect(block).toContain("chunks 10–11");
    expect(block).toContain("re-rank #2");
    expect(block).toContain("protocol-7 title");
    expect(block.indexOf(CHUNKS.polish.id)).toBeLessThan(block.indexOf(CHUNKS.rinse.id));
  });

  it("report - attribution table shows α to 3 decimals without negative zero", () => {
    const html = render(fullRun());
    const section = html.slice(html.indexOf('id="attribution"'), html.indexOf('id="selection"'));
    // The table only: the chart before it carries exact α values in its data attributes.
    const table = section.slice(section.indexOf("<table"));
    const rowC = /<tr[^>]*><td>4<\/td>(.*?)<\/tr>/.exec(table)![1]!;
    expect(rowC).toContain(C);
    expect(rowC).toContain(">0.000<");
    expect(rowC).not.toContain("-0.000");
    expect(table).toContain("1.420");
    expect(table).toContain("0.012");
    expect(table).not.toContain("0.012345");
  });

  it("report - the occlusion strategy is named, and an approximate one (kv-reuse, kv-mask, screen) is flagged as a warning", () => {
    expect(render(fullRun())).toContain('<p>Occlusion strategy: speculative (exact)</p>');
    for (const [strategy, name] of [
      [EngineStrategy.ENGINE_STRATEGY_KV_REUSE, "kv-reuse (APPROXIMATE"],
      [EngineStrategy.ENGINE_STRATEGY_KV_MASK, "kv-mask (APPROXIMATE"],
      [EngineStrategy.ENGINE_STRATEGY_SCREEN, "screen (APPROXIMATE: sets screened out"],
    ] as const) {
      expect(render(fullRun({ strategy }))).toContain(`<p class="warning">Occlusion strategy: ${name}`);
    }
  });

  it("report - a fallback reranker shows the warning", () => {
    const warning = "re-ranked with the bi-encoder fallback (no cross-encoder configured)";
    expect(render(fullRun({ fallback: true }))).toContain(warning);
    expect(render(fullRun({ fallback: false }))).not.toContain(warning);
  });

  it("report - citation spans wrap exactly the cited substring", () => {
    const html = render(fullRun());
    const marks = [...html.matchAll(/<mark class="cite"[^>]*>(.*?)<\/mark>/g)].map((m) => m[1]);
    expect(marks).toEqual([escaped(SPAN_1), escaped(SPAN_2)]);
    expect(html).toContain(`<sup class="cite-ids">[${CHUNKS.polish.id}, ${CHUNKS.rinse.id}]</sup>`);
    expect(html).toContain(`<sup class="cite-ids">[${CHUNKS.passivate.id}]</sup>`);
    // Removing the markup gives back the answer text unchanged: nothing lost or duplicated around the spans.
    const answer = /<div class="answer">(.*?)<\/div>/s.exec(html)![1]!;
    expect(unescaped(answer.replace(/<sup class="cite-ids">.*?<\/sup>/g, "").replace(/<[^>]+>/g, ""))).toBe(ANSWER);
  });

  it("report - which set shaped which sentence: clickable sentences, one bar per block, a heat map with exact drops, hover rules per block; nothing when off", () => {
    const spans = answerSentences(ANSWER).map(({ start, end }) => ({ start, end }));
    expect(spans).toHaveLength(3);
    const drops = [[3.25, -0.5], [0.125, 4.75], [0.25, 0.5]];
    const events = fullRun();
    const final = events.find((e) => e.stage?.$case === "finalAnswer")!.stage!.value as FinalAnswer;
    final.sentences = {
      setIds: ["[1]", "[2]"],
      threshold: 1,
      setChunks: [{ chunkIds: [CHUNKS.polish.id, CHUNKS.rinse.id] }, { chunkIds: [CHUNKS.passivate.id] }],
      sentences: spans.map((sp, k) => ({ ...sp, tokens: 9, logProbFull: -10 - k, logProbNoContext: -20, drops: drops[k]!, topSets: drops[k]!.flatMap((d, j) => (d > 1 ? [j] : [])), supported: drops[k]!.some((d) => d > 1) })),
    };
    const html = render(events);
    const section = /<section id="sentences">(.*?)<\/section>/s.exec(html)![1]!;
    expect([...section.matchAll(/<label for="sa-final-(\d+)" class="sa-s sa-s\d+([^"]*)"/g)].map((m) => [m[1], m[2]!.trim()])).toEqual([
      ["0", "sa-by-0"],
      ["1", "sa-by-1"],
      ["2", "sa-unsupported"],
    ]);
    expect(section).toContain("unsupported by the retrieved passages");
    // The answer with the sentence labels removed is the answer.
    const text = /<div class="answer sa-text">(.*?)<\/div>/s.exec(section)![1]!;
    expect(unescaped(text.replace(/<[^>]+>/g, ""))).toBe(ANSWER);
    // Heat map: one row per sentence, the exact drops; bars: one per block in each sentence's panel.
    const heat = /<table class="sa-heat numeric">(.*?)<\/table>/s.exec(section)![1]!;
    expect([...heat.matchAll(/data-drop="([^"]+)"/g)].map((m) => Number(m[1]))).toEqual(drops.flat());
    expect(section.match(/class="sa-bar-row"/g)).toHaveLength(6);
    expect(section).toContain(`title="${CHUNKS.polish.id}, ${CHUNKS.rinse.id}"`);
    // CSS only (the report forbids scripts): a rule per sentence panel and per block's hover.
    for (let k = 0; k < 3; k++) expect(section).toContain(`#sa-final-${k}:checked ~ .sa-panels .sa-p${k} { display: block; }`);
    for (let j = 0; j < 2; j++) expect(section).toContain(`#sa-final:has(.sa-set-${j}:hover) .sa-by-${j}`);
    expect(html).not.toMatch(/<script/i);
    expect(render(fullRun())).not.toContain(`<section id="sentences">`);
  });

  it("report - an ATTRIBUTION and a SIMILARITY citation of one sentence are one mark naming both", () => {
    const events = fullRun();
    const final = events.find((e) => e.stage?.$case === "finalAnswer")!.stage!.value as FinalAnswer;
    const s2 = final.citations[1]!;
    final.citations.push({ start: s2.start, end: s2.end, chunkIds: [CHUNKS.passivate.id, CHUNKS.dry.id], kind: CitationKind.CITATION_KIND_ATTRIBUTION, score: 4.5 });
    const html = render(events);
    const marks = [...html.matchAll(/<mark class="cite" data-chunks="([^"]*)" title="([^"]*)">/g)];
    expect(marks).toHaveLength(2);
    expect(marks[1]![1]).toBe(`${CHUNKS.passivate.id} ${CHUNKS.dry.id}`);
    expect(marks[1]![2]).toContain("matched by similarity 0.870");
    expect(marks[1]![2]).toContain("attribution: 4.50 nats lost without it");
  });

  it("report - warnings from done are listed", () => {
    const html = render(fullRun({ warnings: ["max_sets truncated selection", "tokens <budget> & more"] }));
    expect(html).toContain("<li>max_sets truncated selection</li>");
    expect(html).toContain("<li>tokens &lt;budget&gt; &amp; more</li>");
  });

  it("report - gap fill lists the added chunks with their text", () => {
    const html = render(fullRun());
    const part = html.slice(html.indexOf('id="gap-fill"'), html.indexOf('id="stats"'));
    expect(part).toContain(CHUNKS.dry.id);
    expect(part).toContain(CHUNKS.dry.text);
    expect(part).toContain("12–12");
    expect(part).toMatch(new RegExp(`${B}</code> → <code>${A}`));
  });

  it("report - timings and counters from done", () => {
    const html = render(fullRun());
    const part = html.slice(html.indexOf('id="stats"'));
    expect(part).toContain("<td>retrieve</td><td>12.3 ms</td>");
    expect(part).toContain("<td>total</td><td>4377.8 ms</td>");
    expect(part).toContain("<td>tokens evaluated</td><td>4321</td><td>2100</td>");
    expect(part).toContain("<td>tokens reused (shared prefix or reused KV)</td><td>6543</td><td>6000</td>");
    expect(part).toContain("<td>decode steps</td><td>777</td><td>400</td>");
  });

  it("report - a baseline stream (no attribution) renders and says there is no attribution", () => {
    const topk = stream([retrieved(), ...finalAnswer(), done()]);
    let html = "";
    expect(() => (html = render(topk))).not.toThrow();
    expect(html).toContain("baseline run: no attribution");
    expect(html).toContain("vanilla RAG");
    expect(bars(html)).toHaveLength(0);
    // Without sets, the retrieved chunks are what the answer came from, so they are listed (escaped).
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("in final context");

    const rerank = stream([retrieved(), reranked(), ...finalAnswer(), done()]);
    html = render(rerank);
    expect(html).toContain("baseline run: no attribution");
    expect(html).toContain("re-ranked RAG");
    expect(html.toLowerCase()).not.toContain("<script");
  });

  it("report - missing events render 'not available' instead of throwing", () => {
    const empty = render([]);
    expect(empty.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(empty).toContain("final answer: not available");
    expect(empty).toContain("attribution: not available");
    expect(empty).not.toContain("baseline run");
    expect(empty).toContain("the stream has no done event");

    // A stream cut after occlusion: sets exist but no α, selection or answer.
    const cut = render(stream([retrieved(), aligned(), reranked(), { $case: "finalAnswerDelta", value: { text: "Polish <first>", finishReason: 0 } }]));
    expect(cut).toContain("attribution: not available");
    expect(cut).toContain("selection: not available");
    expect(cut).toContain("Polish &lt;first&gt;");
    expect(cut).toContain("final answer incomplete");
    expect(cut).toContain(escaped(CHUNKS.note.text));
    expect(cut).toContain("timings and counters (no done event): not available");
  });
});
