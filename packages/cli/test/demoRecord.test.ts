import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runCli } from "./helpers/runCli.js";

// README.md and docs/asking.md show the demo's output rendered from one recorded run
// (bench/results/demo-stories260K.json; readmeTables.test checks the rendering). This checks the record
// itself: the demo, run now with the recorded arguments, prints what the record says, timings aside. When the
// pipeline changes what the demo does, re-record with `node packages/bench/scripts/demo-run.mjs > bench/results/demo-stories260K.json`
// and `node packages/bench/render/readme-tables.mjs`. The comparison is exact (answer text, α to the printed digits): greedy
// decoding on the same llama.cpp build gives the same tokens run to run; a CPU whose kernels round differently
// (another SIMD width) may flip a near-tie, and then the record is re-taken on that machine.
const RECORD = JSON.parse(readFileSync(join(REPO_ROOT, "bench/results/demo-stories260K.json"), "utf8")) as {
  demo_args: string[];
  stderr: string[];
  stdout: string[];
};
const dir = mkdtempSync(join(tmpdir(), "attr-rag-demo-record-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Progress lines without their clock. */
const stages = (lines: readonly string[]) => lines.filter((l) => /^\[\d+(\.\d+)?s\] /.test(l)).map((l) => l.replace(/^\[[^\]]+\] /, ""));
/** stdout from the answer on, the Done line without its wall time. */
const result = (lines: readonly string[]) => lines.slice(lines.indexOf("Answer:")).map((l) => l.replace(/^Done in [\d.]+ s /, "Done in – s "));

describe("the recorded demo run", () => {
  it("demo record - the demo prints today what the committed record (and so the README) shows", async () => {
    const run = await runCli(["demo", "--store", join(dir, "store"), "--report", join(dir, "report.html"), ...RECORD.demo_args]);
    expect(run.code, run.stderr).toBe(0);
    const stderr = run.stderr.replace(/\n$/, "").split("\n");
    const stdout = run.stdout.replace(/\n$/, "").split("\n");
    // The record has every stage (retrieve … gap fill) and an attribution table; so must today's run.
    expect(stages(RECORD.stderr).length).toBeGreaterThanOrEqual(8);
    expect(RECORD.stdout).toContain("Answer:");
    expect(stages(stderr)).toEqual(stages(RECORD.stderr));
    expect(result(stdout)).toEqual(result(RECORD.stdout));
  });
});
