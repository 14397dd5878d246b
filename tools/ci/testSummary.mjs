// What `npm test` ends with, from the per-package reports run-tests.mjs reads: tests passed, failed and
// skipped, every error no test owns counted as a failure (errorsReporter.mjs: a describe whose beforeAll threw
// shows in vitest's JSON report only as skipped tests), the budget's verdict (testTimes.mjs), and the exit
// code. Pure, so what fails the run is tested on synthetic and real reports (packages/cli/test/testTimes.test.ts).

const firstLine = (text) => String(text ?? "").split("\n").find((line) => line.trim() !== "")?.trim().slice(0, 300) ?? "no message";

/**
 * @param {{ name: string, reports?: { report: string, json: any, errors?: { errors: { file?: string, suite?: string, message: string }[] } }[] }[]} packages
 *   each package's vitest*.json reports with the errors report beside each; none when it left no vitest.json
 * @param {{ verdict: "ok" | "warn" | "fail", message?: string }} times the budget's verdict (summarizeTimes)
 * @param {number | null} nxStatus how the Nx runs exited (0: all well)
 */
export function summarizeRun(packages, times, nxStatus) {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const packageLines = [];
  const warnings = [];
  const skippedNames = [];
  const failedNames = [];
  for (const { name, reports } of packages) {
    if (reports === undefined) {
      packageLines.push(`${name}: no test report (its build or test run failed before reporting)`);
      failed += 1;
      failedNames.push(`${name}: no test report (its build or test run failed before reporting)`);
      continue;
    }
    for (const { report, json, errors } of reports) {
      passed += json.numPassedTests ?? 0;
      failed += json.numFailedTests ?? 0;
      skipped += (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
      // Skips are listed by name; a test that may skip says why in its name. Failures are listed last, with
      // the first line of their message, so the tail of a long CI log says what broke.
      for (const file of json.testResults ?? []) {
        for (const test of file.assertionResults ?? []) {
          if (test.status === "skipped" || test.status === "pending" || test.status === "todo") skippedNames.push(`${name}: ${test.fullName}`);
          if (test.status === "failed") failedNames.push(`${name}: ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
        }
      }
      const outside = errors?.errors ?? [{ message: `no errors report beside ${report} (tools/ci/errorsReporter.mjs did not write one)` }];
      failed += outside.length;
      for (const e of outside) failedNames.push(`${name}: ${[e.file, e.suite].filter(Boolean).join(" > ") || "run"}: ${firstLine(e.message)}`);
      const label = report === "vitest.json" ? name : `${name} (${report})`;
      packageLines.push(`${label}: ${json.numPassedTests ?? 0} passed, ${(json.numFailedTests ?? 0) + outside.length} failed`);
    }
  }
  if (times.verdict === "warn") warnings.push(`warning: ${times.message}`);
  if (times.verdict === "fail") {
    failed += 1;
    failedNames.push(`test budget: ${times.message}`);
  }
  // The exit code never disagrees with the count: whatever fails the run is a failure with its reason.
  if (passed === 0) {
    failed += 1;
    failedNames.push("no test passed");
  }
  if (nxStatus !== 0 && failed === 0) {
    failed += 1;
    failedNames.push(`nx exited with status ${nxStatus} though every report is green: see its output above`);
  }
  return { passed, failed, skipped, packageLines, warnings, skippedNames, failedNames, summary: `${passed} passed, ${failed} failed, ${skipped} skipped`, exitCode: failed > 0 ? 1 : 0 };
}
