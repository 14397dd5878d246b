#!/usr/bin/env node
// `npm test`: builds and tests every package through Nx, then adds up the
// per-package vitest JSON reports (packages/<name>/.reports/vitest*.json: vitest.json, and e.g. the engine's
// vitest-gpu.json from its GPU backend run) into the one plain line CI reads:
// "N passed, N failed, N skipped" (testSummary.mjs). A package that has a test script but left no report crashed
// or never ran (e.g. its build failed), so it counts as one failure instead of silently vanishing from the total;
// so does every error no test owns (errorsReporter.mjs: a file that failed to load, a describe whose beforeAll
// threw, as a suite does in CI when nats-server or prometheus is missing).
// Before that line it prints where the time went (each package's test wall time, the slowest files and tests,
// from the timing reports beside the JSON ones) and holds the whole run to its budget (testTimes.mjs): a
// warning past the first number, a failure past the second, naming the slowest files.
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { summarizeRun } from "./testSummary.mjs";
import { summarizeTimes } from "./testTimes.mjs";

const root = resolve(import.meta.dirname, "../..");
const packagesDir = join(root, "packages");
const packages = readdirSync(packagesDir)
  .sort()
  .filter((name) => existsSync(join(packagesDir, name, "package.json")))
  .filter((name) => JSON.parse(readFileSync(join(packagesDir, name, "package.json"), "utf8")).scripts?.test);

for (const name of packages) rmSync(join(packagesDir, name, ".reports"), { recursive: true, force: true });

// The tests run in two lanes at once, each its own Nx process over the built tree: the CLI's suite (the
// longest: whole clusters, mostly waiting on each other) with the web console's and three small packages'
// (index, batch, worker: about two minutes together, which evens the lanes out) beside every other package's,
// one package after another; the benchmarks' package, with its three-minute soak under faults, is in the
// second. Every engine in the tests runs one CPU thread (ATTR_RAG_THREADS=1 for the processes the tests
// start), so the two lanes share two cores without oversubscribing them: with two threads per engine, a thread
// spinning at ggml's barrier while its partner waited for a core made the two lanes slower than one (51 min
// in CI against 47), and one package at a time left a core idle for a third of the run (user+sys CPU time
// 43.5 min over 38.7 min of wall time here). Extra arguments (`npm test -- --projects=@attr-rag/core`) run
// one plain `nx run-many -t build test` with them instead.
const LANES = [["@attr-rag/cli", "@attr-rag/web", "@attr-rag/index", "@attr-rag/batch", "@attr-rag/worker"], "the rest"];

// What several test files start from (the demo store) is built once for this run (testCache.mjs).
const testCache = mkdtempSync(join(tmpdir(), "attr-rag-test-cache-"));
process.env.ATTR_RAG_TEST_CACHE = testCache;

// `attr-rag bench peers` runs node-llama-cpp beside our engine; it is not a workspace (its npm package would
// pull 350 MB of CUDA and Vulkan binaries into every install), so the tests install it here, once, without
// optional packages and without its postinstall: it loads the llama.cpp libraries already in node_modules.
if (!existsSync(join(root, "bench/peers/node_modules/node-llama-cpp/package.json"))) {
  // `npm install --no-save`, not `npm ci`: the lock pins every version, but npm ci refuses it because
  // node-llama-cpp 3.22.1 lists optional packages for platforms that were never published at that version.
  const peers = spawnSync("npm", ["install", "--prefix", join(root, "bench/peers"), "--omit=optional", "--no-save", "--no-audit", "--no-fund"], { cwd: root, stdio: "inherit" });
  if (peers.status !== 0) console.error("installing bench/peers (node-llama-cpp) failed; the bench peers test will say so");
}

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

// Each package's vitest*.json reports with the errors report beside each (errors-<report>.json).
const reports = packages.map((name) => {
  const reportsDir = join(packagesDir, name, ".reports");
  if (!existsSync(join(reportsDir, "vitest.json"))) return { name };
  const read = (file) => JSON.parse(readFileSync(join(reportsDir, file), "utf8"));
  const files = readdirSync(reportsDir).filter((f) => /^vitest.*\.json$/.test(f)).sort();
  return { name, reports: files.map((report) => ({ report, json: read(report), errors: existsSync(join(reportsDir, `errors-${report}`)) ? read(`errors-${report}`) : undefined })) };
});
const timings = [];
for (const name of packages) {
  const reportsDir = join(packagesDir, name, ".reports");
  if (!existsSync(reportsDir)) continue;
  for (const file of readdirSync(reportsDir).filter((f) => /^timing-.*\.json$/.test(f)).sort()) {
    timings.push({ pkg: name, report: file, ...JSON.parse(readFileSync(join(reportsDir, file), "utf8")) });
  }
}
const times = summarizeTimes(timings, (Date.now() - started) / 1000);
const run = summarizeRun(reports, times, nxStatus);
for (const line of run.packageLines) console.error(line);
for (const line of times.lines) console.error(line);
laneSeconds.forEach((seconds, i) => console.error(`test lane ${i + 1} (${Array.isArray(LANES[i]) ? LANES[i].join(", ") : LANES[i]}): ${(seconds / 60).toFixed(1)} min`));
for (const line of run.warnings) console.error(line);
for (const test of run.skippedNames) console.error(`skipped: ${test}`);
for (const test of run.failedNames) console.error(`failed: ${test}`);
console.log(run.summary);
process.exitCode = run.exitCode;
