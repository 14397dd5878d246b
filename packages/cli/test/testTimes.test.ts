// The suite's own accounting: where the time went and the budget (tools/ci/testTimes.mjs), what fails the run
// (tools/ci/testSummary.mjs), and the reporters they rely on (timing with the assertion count, errors no test
// owns), each run on a small fixture of its own.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { REPO_ROOT } from "../../bench/render/readme-tables.mjs";
import type { ErrorsReport } from "../../../tools/ci/errorsReporter.mjs";
import { summarizeRun, type PackageReports, type VitestJson } from "../../../tools/ci/testSummary.mjs";
import { summarizeTimes, type TimingReport } from "../../../tools/ci/testTimes.mjs";

const report = (pkg: string, wallSeconds: number, files: [string, number, [string, number, number][]][]): TimingReport => ({
  pkg,
  report: "timing-vitest.json",
  wallSeconds,
  files: files.map(([file, seconds, tests]) => ({ file, seconds, tests: tests.map(([name, s, assertions]) => ({ name, state: "passed", seconds: s, assertions })) })),
});

/** A vitest JSON report of `passed` passing tests. */
function vitestJson(passed: number): VitestJson {
  const tests = Array.from({ length: passed }, (_, i) => ({ fullName: `t${i}`, status: "passed", failureMessages: [] }));
  return { numPassedTests: passed, numFailedTests: 0, numPendingTests: 0, numTodoTests: 0, testResults: [{ name: "a.test.ts", status: "passed", message: "", assertionResults: tests }] };
}

const reports = [
  report("core", 12, [["packages/core/test/a.test.ts", 3, [["a1", 1, 4], ["a2", 2, 1]]]]),
  report("engine", 300, [
    ["packages/engine/test/b.test.ts", 200, [["b1", 150, 10]]],
    ["packages/engine/test/c.test.ts", 90, [["c1", 5, 2], ["c2", 80, 3]]],
  ]),
  report("engine", 40, [["packages/engine/test/gpu/d.test.ts", 39, [["d1", 38, 7]]]]),
];

describe("tools/ci: where the time went, the budget and what fails the run", () => {
  it("times - per-package wall (every report of a package added), the slowest files and tests, slowest first", () => {
    const { lines, verdict, tests, assertions } = summarizeTimes(reports, 20 * 60, { warnMinutes: 30, failMinutes: 60 });
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

  it("times - the budget: at its first number passes, past it warns, at and past the second fails only past it, naming the five slowest files", () => {
    const budget = { warnMinutes: 10, failMinutes: 20 };
    const six = [report("web", 100, [1, 2, 3, 4, 5, 6].map((n): [string, number, [string, number, number][]] => [`packages/web/test/f${n}.test.ts`, n * 10, [[`t${n}`, n, 1]]]))];
    const slowest = "packages/web/test/f6.test.ts (60 s), packages/web/test/f5.test.ts (50 s), packages/web/test/f4.test.ts (40 s), packages/web/test/f3.test.ts (30 s), packages/web/test/f2.test.ts (20 s)";
    const at = (seconds: number) => summarizeTimes(six, seconds, budget);
    expect(at(10 * 60)).toMatchObject({ verdict: "ok" });
    expect(at(10 * 60).message).toBeUndefined();
    expect(at(10 * 60 + 6)).toMatchObject({ verdict: "warn", message: `the suite took 10.1 min, past its 10 min budget: the slowest files are ${slowest}` });
    expect(at(20 * 60)).toMatchObject({ verdict: "warn", message: `the suite took 20.0 min, past its 10 min budget: the slowest files are ${slowest}` });
    const fail = at(20 * 60 + 6);
    expect(fail).toMatchObject({ verdict: "fail", message: `the suite took 20.1 min, past its 20 min limit (CI stops at 90): make the slowest files faster: ${slowest}` });
    expect(fail.lines.at(-1)).toBe("whole run: 20.1 min (builds and tests); budget: warn past 10 min, fail past 20 min (tools/ci/testTimes.mjs)");
  });

  it("run - the budget decides with the tests: past its second number one failure naming the slowest files and exit 1, past the first a warning and exit 0", () => {
    const budget = { warnMinutes: 10, failMinutes: 20 };
    const green: PackageReports[] = [{ name: "core", reports: [{ report: "vitest.json", json: vitestJson(3), errors: { errors: [] } }] }];
    const ok = summarizeRun(green, summarizeTimes(reports, 5 * 60, budget), 0);
    expect(ok).toMatchObject({ summary: "3 passed, 0 failed, 0 skipped", exitCode: 0, warnings: [], failedNames: [] });
    const warn = summarizeRun(green, summarizeTimes(reports, 15 * 60, budget), 0);
    expect(warn).toMatchObject({ summary: "3 passed, 0 failed, 0 skipped", exitCode: 0, failedNames: [] });
    expect(warn.warnings).toEqual([expect.stringMatching(/^warning: the suite took 15\.0 min, past its 10 min budget: the slowest files are packages\/engine\/test\/b\.test\.ts \(200 s\)/)]);
    const fail = summarizeRun(green, summarizeTimes(reports, 25 * 60, budget), 0);
    expect(fail).toMatchObject({ summary: "3 passed, 1 failed, 0 skipped", exitCode: 1, warnings: [] });
    expect(fail.failedNames).toEqual([expect.stringMatching(/^test budget: the suite took 25\.0 min, past its 20 min limit .*: packages\/engine\/test\/b\.test\.ts \(200 s\), packages\/engine\/test\/c\.test\.ts \(90 s\)/)]);
  });

  it("run - a package without a report, a run where nothing passed, and Nx failing with green reports each fail the run with the reason", () => {
    const ok = { verdict: "ok" as const };
    const green: PackageReports = { name: "core", reports: [{ report: "vitest.json", json: vitestJson(2), errors: { errors: [] } }] };
    expect(summarizeRun([green, { name: "web" }], ok, 0)).toMatchObject({ summary: "2 passed, 1 failed, 0 skipped", exitCode: 1, failedNames: [expect.stringMatching(/^web: no test report/)] });
    expect(summarizeRun([{ name: "core", reports: [{ report: "vitest.json", json: vitestJson(0), errors: { errors: [] } }] }], ok, 0)).toMatchObject({ exitCode: 1, failedNames: ["no test passed"] });
    expect(summarizeRun([green], ok, 1)).toMatchObject({ summary: "2 passed, 1 failed, 0 skipped", exitCode: 1, failedNames: [expect.stringMatching(/^nx exited with status 1/)] });
    expect(summarizeRun([{ name: "core", reports: [{ report: "vitest.json", json: vitestJson(2) }] }], ok, 0)).toMatchObject({ exitCode: 1, failedNames: [expect.stringMatching(/^core: run: no errors report beside vitest\.json/)] });
  });

  it("run - with CI set, suites that need a missing nats-server or prometheus fail the run (not skipped), each named with what is missing; so does a file that fails to load", () => {
    const dir = mkdtempSync(join(tmpdir(), "attr-rag-missing-tools-"));
    try {
      const fixture = join(REPO_ROOT, "packages/cli/test/fixtures/missingTools");
      // Node by its own path: the PATH left has no nats-server or prometheus, nor anything else.
      const run = spawnSync(process.execPath, [join(REPO_ROOT, "node_modules/vitest/vitest.mjs"), "run", "--root", fixture, "--config", join(fixture, "vitest.config.mjs")], {
        env: { ...process.env, CI: "true", PATH: join(dir, "empty"), JSON_OUT: join(dir, "vitest.json"), ERRORS_OUT: join(dir, "errors.json") },
        encoding: "utf8",
      });
      expect(run.status, run.stderr).toBe(1);
      const json = JSON.parse(readFileSync(join(dir, "vitest.json"), "utf8")) as VitestJson;
      const errors = JSON.parse(readFileSync(join(dir, "errors.json"), "utf8")) as ErrorsReport;
      const verdict = summarizeRun([{ name: "cli", reports: [{ report: "vitest.json", json, errors }] }], { verdict: "ok" }, run.status);
      // The nats-server suite's test only shows as skipped in vitest's report: its beforeAll failed.
      expect(verdict).toMatchObject({ summary: "1 passed, 3 failed, 1 skipped", exitCode: 1 });
      expect(verdict.failedNames.sort()).toEqual([
        "cli: failsToLoad.check.ts: this file fails to load on purpose",
        "cli: needs prometheus answers PromQL: Error: prometheus is not installed (apt-get install -y prometheus): cannot start the Prometheus server these tests scrape with",
        "cli: needsTools.check.ts > needs nats-server: nats-server was not found on PATH; install it (Debian: apt-get install -y nats-server) or pass its path",
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
