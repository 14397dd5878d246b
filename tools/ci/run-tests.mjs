#!/usr/bin/env node
// `npm test`: builds and tests every package through Nx (`nx run-many -t build test`), then adds up the
// per-package vitest JSON reports (packages/<name>/.reports/vitest*.json: vitest.json, and e.g. the engine's
// vitest-gpu.json from its GPU backend run) into the one plain line CI reads:
// "N passed, N failed, N skipped". A package that has a test script but left no report crashed or never
// ran (e.g. its build failed), so it counts as one failure instead of silently vanishing from the total.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const packagesDir = join(root, "packages");
const packages = readdirSync(packagesDir)
  .sort()
  .filter((name) => existsSync(join(packagesDir, name, "package.json")))
  .filter((name) => JSON.parse(readFileSync(join(packagesDir, name, "package.json"), "utf8")).scripts?.test);

for (const name of packages) rmSync(join(packagesDir, name, ".reports"), { recursive: true, force: true });

const nxArgs = ["run-many", "-t", "build", "test", "--outputStyle=stream", ...process.argv.slice(2)];
const nx = spawnSync(join(root, "node_modules/.bin/nx"), nxArgs, { cwd: root, stdio: "inherit" });
if (nx.error) console.error(`could not start nx: ${nx.error.message}; run \`npm ci\` first`);

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
for (const test of skippedNames) console.error(`skipped: ${test}`);
for (const test of failedNames) console.error(`failed: ${test}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || passed === 0 || nx.status !== 0 ? 1 : 0;
