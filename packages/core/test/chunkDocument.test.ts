import { describe, expect, it } from "vitest";
import { chunkDocument } from "../src/chunking/chunkDocument.js";

function words(n: number, seed = 1): string {
  const vocab = ["add", "the", "solution", "dropwise", "stir", "for", "ten", "minutes", "filter", "crystals", "wash", "with", "cold", "water"];
  let x = seed;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out.push(vocab[x % vocab.length]!);
  }
  return out.join(" ");
}

describe("chunker", () => {
  it("chunker - offsets slice the document to each chunk's text, ordinals are 0..n-1", () => {
    const doc = [
      "Step 1. Weigh 3.0 g of p-aminophenol into a 125 mL flask.",
      words(300, 2) + ".",
      "Step 2. Add 10 mL of water and 3.5 mL of acetic anhydride.\nSwirl the flask.",
      words(250, 3),
    ].join("\n\n");
    const chunks = chunkDocument("exp-1", doc, { maxChars: 400 });
    expect(chunks.length).toBeGreaterThan(3);
    chunks.forEach((c, i) => {
      expect(c.ordinal).toBe(i);
      expect(doc.slice(c.start, c.end)).toBe(c.text);
      expect(c.text.length).toBeLessThanOrEqual(400);
      expect(c.text).toBe(c.text.trim());
      expect(c.id).toBe(`exp-1#${i}`);
    });
    for (let i = 1; i < chunks.length; i++) expect(chunks[i]!.start).toBeGreaterThanOrEqual(chunks[i - 1]!.end);
  });

  it("chunker - never splits inside a word, and keeps every word of the document in order", () => {
    const doc = words(2000, 7);
    const chunks = chunkDocument("d", doc, { maxChars: 97 });
    for (const c of chunks) {
      const before = doc[c.start - 1];
      const after = doc[c.end];
      expect(before === undefined || /\s/.test(before)).toBe(true);
      expect(after === undefined || /\s/.test(after)).toBe(true);
    }
    expect(chunks.map((c) => c.text).join(" ").split(/\s+/)).toEqual(doc.split(/\s+/));
  });

  it("chunker - prefers paragraph, then line, then sentence boundaries", () => {
    const para1 = "First paragraph sentence one. Sentence two is here.";
    const para2 = "Second paragraph line one.\nSecond paragraph line two.";
    const doc = `${para1}\n\n${para2}`;
    expect(chunkDocument("d", doc, { maxChars: 60 }).map((c) => c.text)).toEqual([para1, para2]);
    expect(chunkDocument("d", doc, { maxChars: 30 }).map((c) => c.text)).toEqual([
      "First paragraph sentence one.",
      "Sentence two is here.",
      "Second paragraph line one.",
      "Second paragraph line two.",
    ]);
  });

  it("chunker - packs small pieces together up to maxChars", () => {
    const doc = "a b c d e f g h i j k l m n o p";
    const chunks = chunkDocument("d", doc, { maxChars: 8 });
    expect(chunks.map((c) => c.text)).toEqual(["a b c d", "e f g h", "i j k l", "m n o p"]);
  });

  it("chunker - a word longer than maxChars becomes its own chunk instead of being cut", () => {
    const long = "x".repeat(50);
    const chunks = chunkDocument("d", `short words ${long} tail`, { maxChars: 20 });
    expect(chunks.map((c) => c.text)).toEqual(["short words", long, "tail"]);
  });

  it("chunker - is stable: same input, same chunks", () => {
    const doc = words(500, 11);
    expect(chunkDocument("d", doc, { maxChars: 120 })).toEqual(chunkDocument("d", doc, { maxChars: 120 }));
  });

  it("chunker - empty and whitespace-only documents give no chunks", () => {
    expect(chunkDocument("d", "")).toEqual([]);
    expect(chunkDocument("d", " \n\n\t ")).toEqual([]);
  });

  it("chunker - unicode text keeps surrogate pairs and offsets intact", () => {
    const doc = "Añadir 5 mL de éter 🧪 lentamente. 加入水 并搅拌。 " + "ß".repeat(10);
    const chunks = chunkDocument("d", doc, { maxChars: 12 });
    for (const c of chunks) expect(doc.slice(c.start, c.end)).toBe(c.text);
    expect(chunks.some((c) => c.text.includes("🧪"))).toBe(true);
  });

  it("chunker - overlap repeats the end of the previous chunk from a word boundary", () => {
    const doc = words(200, 5);
    const plain = chunkDocument("d", doc, { maxChars: 100 });
    const overlapped = chunkDocument("d", doc, { maxChars: 100, overlapChars: 20 });
    expect(overlapped.length).toBe(plain.length);
    for (let i = 1; i < overlapped.length; i++) {
      expect(overlapped[i]!.start).toBeLessThan(plain[i]!.start);
      expect(overlapped[i]!.start).toBeGreaterThanOrEqual(plain[i]!.start - 20);
      expect(/\s/.test(doc[overlapped[i]!.start - 1]!)).toBe(true);
      expect(overlapped[i]!.end).toBe(plain[i]!.end);
    }
  });

  it("chunker - rejects bad options and inputs with clear errors", () => {
    expect(() => chunkDocument("", "text")).toThrow(/docId/);
    expect(() => chunkDocument("d", "text", { maxChars: 0 })).toThrow(/maxChars/);
    expect(() => chunkDocument("d", "text", { maxChars: 10, overlapChars: 10 })).toThrow(/overlapChars/);
    expect(() => chunkDocument("d", 5 as unknown as string)).toThrow(/must be a string/);
  });
});
