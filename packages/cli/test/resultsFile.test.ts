import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BatchItemResult } from "@attr-rag/contracts";
import { resultRow } from "@attr-rag/batch";
import { afterAll, describe, expect, it } from "vitest";
import { ResultsFile } from "../src/batch/resultsFile.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-results-file-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const result = (id: string) => BatchItemResult.fromPartial({ batchId: "b", itemId: id, question: `q ${id}` });
const row = (id: string) => JSON.stringify(resultRow(result(id)));

describe("batch results file (--out)", () => {
  it("results file - reopening cuts only an unterminated last line; a blank line keeps the rows around it", () => {
    const path = join(dir, "blank.jsonl");
    writeFileSync(path, `${row("a")}\n\n${row("b")}\n${row("c")}\n{"id": "d", "quest`);
    const file = ResultsFile.open(path);
    expect(file.order).toEqual(["a", "b", "c"]);
    expect(file.append(result("b"))).toBe(false);
    expect(file.append(result("d"))).toBe(true);
    file.close();
    expect(readFileSync(path, "utf8")).toBe(`${row("a")}\n\n${row("b")}\n${row("c")}\n${row("d")}\n`);
    // A whole file reopens unchanged.
    expect(ResultsFile.open(path).order).toEqual(["a", "b", "c", "d"]);
  });

  it("results file - a damaged line before the last is an error naming it, and the file is left as it was", () => {
    const path = join(dir, "damaged.jsonl");
    const text = `${row("a")}\n{not json\n${row("b")}\n`;
    writeFileSync(path, text);
    expect(() => ResultsFile.open(path)).toThrow(new RegExp(`--out: ${path.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} line 2 is not JSON \\("\\{not json"\\); fix or remove that line`));
    expect(readFileSync(path, "utf8")).toBe(text);
    writeFileSync(path, `${row("a")}\n{"question": "no id"}\n`);
    expect(() => ResultsFile.open(path)).toThrow(/line 2 is not a --format rows result line \(no "id"\)/);
  });

  it("results file - openai lines are keyed by custom_id; a file of the other format is refused, naming it", () => {
    const path = join(dir, "openai.jsonl");
    const file = ResultsFile.open(path, "openai");
    expect(file.append(result("x"))).toBe(true);
    expect(file.append(result("x"))).toBe(false);
    file.close();
    const line = JSON.parse(readFileSync(path, "utf8").trim()) as { custom_id: string; response: { body: { id: string } } };
    expect(line.custom_id).toBe("x");
    expect(ResultsFile.open(path, "openai").order).toEqual(["x"]);
    expect(() => ResultsFile.open(path, "rows")).toThrow(/line 1 is not a --format rows result line \(no "id"\) \(it holds --format openai lines\)/);
  });
});
