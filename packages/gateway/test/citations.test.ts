import { CitationKind } from "@attr-rag/contracts";
import { UseLiteEmbedder } from "@attr-rag/index";
import { afterAll, describe, expect, it } from "vitest";
import { answerSentences } from "../src/index.js";
import { citeAnswer } from "../src/pipeline/citations.js";

const embedder = new UseLiteEmbedder();
afterAll(() => embedder.dispose());
const signal = new AbortController().signal;

const blocks = [
  { text: "Weigh 2.00 g of p-aminophenol into a dry flask.", chunkIds: ["exp-01#0"], chunkTexts: ["Weigh 2.00 g of p-aminophenol into a dry flask."] },
  {
    text: "Heat in a hot-water bath at 85 °C for 15 minutes.\nCool the flask in ice for 15 minutes.",
    chunkIds: ["exp-01#1", "exp-01#2"],
    chunkTexts: ["Heat in a hot-water bath at 85 °C for 15 minutes.", "Cool the flask in ice for 15 minutes."],
  },
];

describe("gateway citations", () => {
  it("citations - sentences keep exact UTF-16 offsets", () => {
    const text = "  Step one (2.5 g). Step two!\nThird line 😀 here\n\nLast.";
    const spans = answerSentences(text);
    expect(spans.map((s) => s.text)).toEqual(["Step one (2.5 g).", "Step two!", "Third line 😀 here", "Last."]);
    for (const s of spans) expect(text.slice(s.start, s.end)).toBe(s.text);
    expect(answerSentences("")).toEqual([]);
  });

  it("citations - [i] markers cite block i's chunks; unknown labels are ignored", async () => {
    const text = "Weigh the solid [1]. Heat and cool it [2][1]. Then stop [9].";
    const citations = await citeAnswer(text, blocks, (t, s) => embedder.embed(t, s), signal);
    const markers = citations.filter((c) => c.kind === CitationKind.CITATION_KIND_MARKER);
    expect(markers.map((c) => [text.slice(c.start, c.end), c.chunkIds])).toEqual([
      ["Weigh the solid [1].", ["exp-01#0"]],
      ["Heat and cool it [2][1].", ["exp-01#1", "exp-01#2", "exp-01#0"]],
    ]);
  });

  it("citations - an unmarked sentence cites its closest context chunk by embedding similarity", async () => {
    const text = "Cool the flask in ice for 15 minutes.";
    const [c] = await citeAnswer(text, blocks, (t, s) => embedder.embed(t, s), signal);
    expect(c).toMatchObject({ start: 0, end: text.length, chunkIds: ["exp-01#2"], kind: CitationKind.CITATION_KIND_SIMILARITY });
    expect(c!.score).toBeGreaterThan(0.95);
  });
});
