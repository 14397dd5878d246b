import { describe, expect, it } from "vitest";
import { codePointLength, isPythonWhitespace, pythonRstrip, pythonSplit } from "../../src/metrics/pythonText.js";
import { expected } from "./fixtures.js";

describe("pythonText", () => {
  it("pythonText - whitespace set equals CPython's str.isspace() over every code point", () => {
    const ours: number[] = [];
    for (let cp = 0; cp < 0x110000; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      if (isPythonWhitespace(String.fromCodePoint(cp))) ours.push(cp);
    }
    expect(ours).toEqual(expected.pythonWhitespace);
  });

  it("pythonText - split drops empty pieces and splits on U+0085 but not on U+FEFF", () => {
    expect(pythonSplit("  a\u0085b\ufeffc \t\n d  ")).toEqual(["a", "b\ufeffc", "d"]);
    expect(pythonSplit("")).toEqual([]);
    expect(pythonSplit(" \u3000 ")).toEqual([]);
  });

  it("pythonText - rstrip removes only trailing Python whitespace", () => {
    expect(pythonRstrip("  x \u001c\n")).toBe("  x");
    expect(pythonRstrip("x\ufeff")).toBe("x\ufeff");
    expect(pythonRstrip("   ")).toBe("");
  });

  it("pythonText - codePointLength counts surrogate pairs once and lone surrogates once", () => {
    expect(codePointLength("a😀b")).toBe(3);
    expect(codePointLength("\ud800x")).toBe(2);
    expect(codePointLength("")).toBe(0);
  });
});
