// The suite's own accounting: where the time went and the budget (tools/ci/testTimes.mjs), and the timing
// reporter with the assertion count it relies on, run on a small fixture of its own.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../../tools/bench/readme-tables.mjs";
import { BUDGET, summarizeTimes, type TimingReport } from "../../../tools/ci/testTimes.mjs";

const report = (pkg: string, wallSeconds: number, files: [string, number, [string, number, number][]][]): TimingReport => ({
  pkg,
  report: "timing-vitest.json",
  wallSeconds,
  files: files.map(([file, seconds, tests]) => ({ file, seconds, tests: tests.map(([name, s, assertions]) => ({ name, state: "passed", seconds: s, assertions })) })),
});

const reports = [
  report("core", 12, [["packages/core/test/a.test.ts", 3, [["a1", 1, 4], ["a2", 2, 1]]]]),
  report("engine", 300, [
    ["packages/engine/test/b.test.ts", 200, [["b1", 150, 10]]],
    ["packages/engine/test/c.test.ts", 90, [["c1", 5, 2], ["c2", 80, 3]]],
  ]),
  report("engine", 40, [["packages/engine/test/gpu/d.test.ts", 39, [["d1", 38, 7]]]]),
];

describe("tools/ci/testTimes.mjs", () => {
  it("times - per-package wall (every report of a package added), the slowest files and tests, slowest first", () => {
    const { lines, verdict, tests, assertions } = summarizeTimes(reports, 20 * 60);
    expect(verdict).toBe("ok");
    expect(tests).toBe(6);
    expect(assertions).toBe(27);
    const pkgLines = lines.slice(2, 5);
    expect(pkgLines[0]).toMatch(/^ {2}engine +340\.0 +3 +4 +22$/);
    expect(pkgLines[1]).toMatch(/^ {2}core +12\.0 +1 +2 +5$/);
    expect(pkgLines[2]).toMatch(/^ {2}all +352\.0 +4 +6 +27$/);
    const files = lines.slice(lines.findIndex((l) => l.includes("slowest test files")) + 1, lines.findIndex((l) => l.includes("slowest tests")));
    expect(files.map((l) => l.trim().split(/ +/)[1])).toEqual(["packages/engine/test/b.test.ts", "packages/engine/test/c.test.ts", "packages/engine/test/gpu/d.test.ts", "packages/core/test/a.test.ts"]);
    const slowTests = lines.slice(lines.findIndex((l) => l.includes("slowest tests")) + 1, -1);
    expect(slowTests[0]).toContain("b.test.ts > b1");
    expect(slowTests.map((l) => Number(l.trim().split(/ +/)[0]))).toEqual([150, 80, 38, 5, 2, 1]);
  });

  it("times - the budget: under it passes, past the first number warns, past the second fails, naming the slowest files", () => {
    expect(BUDGET.warnMinutes).toBeLessThan(BUDGET.failMinutes);
    expect(BUDGET.failMinutes).toBeLessThan(90);
    expect(summarizeTimes(reports, BUDGET.warnMinutes * 60 - 1).verdict).toBe("ok");
    const warn = summarizeTimes(reports, BUDGET.warnMinutes * 60 + 1);
    expect(warn.verdict).toBe("warn");
    expect(warn.message).toContain("packages/engine/test/b.test.ts (200 s)");
    const fail = summarizeTimes(reports, BUDGET.failMinutes * 60 + 1);
    expect(fail.verdict).toBe("fail");
    expect(fail.message).toMatch(/past its \d+ min limit.*packages\/engine\/test\/b\.test\.ts \(200 s\), packages\/engine\/test\/c\.test\.ts \(90 s\)/);
    expect(fail.lines.at(-1)).toContain(`fail past ${BUDGET.failMinutes} min`);
  });

  it("times - the timing reporter counts each test's assertions and gives hooks' time to the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "attr-rag-timing-"));
    try {
      const out = join(dir, "timing.json");
      const fixture = join(REPO_ROOT, "packages/cli/test/fixtures/timing");
      const run = spawnSync(join(REPO_ROOT, "node_modules/.bin/vitest"), ["run", "--root", fixture, "--config", join(fixture, "vitest.config.mjs")], {
        env: { ...process.env, TIMING_OUT: out },
        encoding: "utf8",
      });
      expect(run.status, run.stderr).toBe(1); // one fixture test fails on purpose
      const timing = JSON.parse(readFileSync(out, "utf8")) as { wallSeconds: number; files: TimingReport["files"] };
      expect(timing.files).toHaveLength(1);
      const [file] = timing.files;
      expect(file!.file).toBe("sample.check.ts");
      expect(Object.fromEntries(file!.tests.map((t) => [t.name, [t.state, t.assertions]]))).toEqual({
        "three assertions": ["passed", 3],
        "no assertion": ["passed", 0],
        "fails after one": ["failed", 2],
      });
      // The 0.4 s beforeAll is no test's time, but it is the file's.
      expect(file!.tests.reduce((s, t) => s + t.seconds, 0)).toBeLessThan(0.3);
      expect(file!.seconds).toBeGreaterThanOrEqual(0.4);
      expect(timing.wallSeconds).toBeGreaterThanOrEqual(file!.seconds);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
