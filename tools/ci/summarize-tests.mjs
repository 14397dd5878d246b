#!/usr/bin/env node
// Adds up the per-package vitest JSON reports (.reports/tests/<package>.json) into the one plain line CI
// reads: "N passed, N failed, N skipped". A package that has a test script but wrote no report crashed
// before reporting, so it counts as one failure instead of silently vanishing from the total.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "../..");
const reportsDir = join(root, ".reports/tests");
const packagesDir = join(root, "packages");

let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
for (const name of readdirSync(packagesDir).sort()) {
  const pkgFile = join(packagesDir, name, "package.json");
  if (!existsSync(pkgFile)) continue;
  const pkg = JSON.parse(readFileSync(pkgFile, "utf8"));
  if (!pkg.scripts?.test) continue;
  const reportFile = join(reportsDir, `${name}.json`);
  if (!existsSync(reportFile)) {
    missing.push(name);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(reportFile, "utf8"));
  passed += report.numPassedTests ?? 0;
  failed += report.numFailedTests ?? 0;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A suite that failed to load (syntax error, missing build) has no tests but must not look green.
  failed += (report.testResults ?? []).filter((f) => f.status === "failed" && (f.assertionResults ?? []).length === 0).length;
  console.error(`${name}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`);
}
for (const name of missing) console.error(`${name}: no test report (the test run crashed or did not start)`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exitCode = failed > 0 || passed === 0 ? 1 : 0;
