#!/usr/bin/env node
// `npm test`: builds and tests every package through Nx, then adds up the
// per-package vitest JSON reports (packages/<name>/.reports/vitest*.json: vitest.json, and e.g. the engine's
// vitest-gpu.json from its GPU backend run) into the one plain line CI reads:
// "N passed, N failed, N skipped". A package that has a test script but left no report crashed or never
// ran (e.g. its build failed), so it counts as one failure instead of silently vanishing from the total.
// Before that line it prints where the time went (each package's test wall time, the slowest files and tests,
// from the timing reports beside the JSON ones) and holds the whole run to its budget (testTimes.mjs): a
// warning past the first number, a failure past the second, naming the slowest files.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { summarizeTimes } from "./testTimes.mjs";

const root = resolve(import.meta.dirname, "../..");
const packagesDir = join(root, "packages");
const packages = readdirSync(packagesDir)
  .sort()
  .filter((name) => existsSync(join(packagesDir, name, "package.json")))
  .filter((name) => JSON.parse(readFileSync(join(packagesDir, name, "package.json"), "utf8")).scripts?.test);

for (const name of packages) rmSync(join(packagesDir, name, ".reports"), { recursive: true, force: true });

// The tests run in two lanes at once, each its own Nx process over the built tree: the CLI's suite (the
// longest: whole clusters, mostly waiting on each other) beside every other package's, one package after
// another. Every engine in the tests runs one CPU thread (ATTR_RAG_THREADS=1 for the processes the tests
// start), so the two lanes share two cores without oversubscribing them: with two threads per engine, a thread
// spinning at ggml's barrier while its partner waited for a core made the two lanes slower than one (51 min
// in CI against 47), and one package at a time left a core idle for a third of the run (user+sys CPU time
// 43.5 min over 38.7 min of wall time here). Extra arguments (`npm test -- --projects=@attr-rag/core`) run
// one plain `nx run-many -t build test` with them instead.
const LANES = [["@attr-rag/cli"], "the rest"];

// What several test files start from (the demo store) is built once for this run (testCache.mjs).
const testCache = mkdtempSync(join(tmpdir(), "attr-rag-test-cache-"));
process.env.ATTR_RAG_TEST_CACHE = testCache;

const started = Date.now();
const nxBin = join(root, "node_modules/.bin/nx");
const nxRun = (args) => spawnSync(nxBin, ["run-many", ...args, "--outputStyle=stream"], { cwd: root, stdio: "inherit" });
const laneSeconds = [];
let nxStatus;
if (process.argv.length > 2) {
  const nx = nxRun(["-t", "build", "test", ...process.argv.slice(2)]);
  if (nx.error) console.error(`could not start nx: ${nx.error.message}; run \`npm ci\` first`);
  nxStatus = nx.status;
} else {
  const build = nxRun(["-t", "build"]);
  if (build.error) console.error(`could not start nx: ${build.error.message}; run \`npm ci\` first`);
  nxStatus = build.status;
  // A failed build leaves its packages without reports, and each counts as a failure below.
  if (build.status === 0) {
    const inLanes = LANES.filter((l) => Array.isArray(l)).flat();
    const lanes = LANES.map((lane) => (Array.isArray(lane) ? [`--projects=${lane.join(",")}`] : [`--exclude=${inLanes.join(",")}`]));
    const statuses = await Promise.all(
      lanes.map(
        (projects, i) =>
          new Promise((resolve) => {
            const laneStart = Date.now();
            const child = spawn(nxBin, ["run-many", "-t", "test", "--excludeTaskDependencies", ...projects, "--outputStyle=stream"], { cwd: root, stdio: "inherit" });
            child.on("error", (error) => console.error(`could not start nx: ${error.message}`));
            child.on("close", (code) => {
              laneSeconds[i] = (Date.now() - laneStart) / 1000;
              resolve(code);
            });
          }),
      ),
    );
    nxStatus = statuses.every((code) => code === 0) ? 0 : 1;
  }
}

rmSync(testCache, { recursive: true, force: true });

let passed = 0;
let failed = 0;
let skipped = 0;
const skippedNames = [];
const failedNames = [];
const firstLine = (text) => String(text ?? "no message").split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 300) ?? "no message";
for (const name of packages) {
  const reportsDir = join(packagesDir, name, ".reports");
  if (!existsSync(join(reportsDir, "vitest.json"))) {
    console.error(`${name}: no test report (its build or test run failed before reporting)`);
    failed += 1;
    continue;
  }
  for (const file of readdirSync(reportsDir).filter((f) => /^vitest.*\.json$/.test(f)).sort()) addReport(name, file, JSON.parse(readFileSync(join(reportsDir, file), "utf8")));
}

function addReport(name, reportName, report) {
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A test file that failed outside its tests (load error, failing beforeAll) has no failed test of its
  // own, only skipped ones or none, but must not look green.
  const brokenFiles = (report.testResults ?? []).filter(
    (f) => f.status === "failed" && !(f.assertionResults ?? []).some((a) => a.status === "failed"),
  );
  failed += brokenFiles.length;
  console.error(`${name}${reportName === "vitest.json" ? "" : ` (${reportName})`}: ${report.numPassedTests} passed, ${report.numFailedTests + brokenFiles.length} failed`);
  // Skips are listed by name; a test that may skip says why in its name. Failures are listed last, with the
  // first line of their message, so the tail of a long CI log says what broke.
  for (const file of report.testResults ?? []) {
    for (const test of file.assertionResults ?? []) {
      if (test.status === "skipped" || test.status === "pending" || test.status === "todo") skippedNames.push(`${name}: ${test.fullName}`);
      if (test.status === "failed") failedNames.push(`${name}: ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
    }
    if (brokenFiles.includes(file)) failedNames.push(`${name}: ${file.name}: ${firstLine(file.message)}`);
  }
}
const timings = [];
for (const name of packages) {
  const reportsDir = join(packagesDir, name, ".reports");
  if (!existsSync(reportsDir)) continue;
  for (const file of readdirSync(reportsDir).filter((f) => /^timing-.*\.json$/.test(f)).sort()) {
    timings.push({ pkg: name, report: file, ...JSON.parse(readFileSync(join(reportsDir, file), "utf8")) });
  }
}
const times = summarizeTimes(timings, (Date.now() - started) / 1000);
for (const line of times.lines) console.error(line);
laneSeconds.forEach((seconds, i) => console.error(`test lane ${i + 1} (${Array.isArray(LANES[i]) ? LANES[i].join(", ") : LANES[i]}): ${(seconds / 60).toFixed(1)} min`));
if (times.verdict === "warn") console.error(`warning: ${times.message}`);
if (times.verdict === "fail") {
  failed += 1;
  failedNames.push(`test budget: ${times.message}`);
}

for (const test of skippedNames) console.error(`skipped: ${test}`);
for (const test of failedNames) console.error(`failed: ${test}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || passed === 0 || nxStatus !== 0 ? 1 : 0;
