// Where the suite's time went, from the timing reports tools/ci/timingReporter.mjs writes
// (packages/<name>/.reports/timing-*.json), and the budget the whole `npm test` is held to. Pure: run-tests.mjs
// reads the files and the clock, this turns them into the lines it prints and a verdict.

/** The suite's budget, in one place: past `warnMinutes` the run warns, past `failMinutes` it fails (CI's hard limit is 90). */
export const BUDGET = { warnMinutes: 35, failMinutes: 60 };

const SLOWEST = 15;

/**
 * @param {{ pkg: string, report: string, wallSeconds: number, files: { file: string, seconds: number, tests: { name: string, state: string, seconds: number, assertions: number }[] }[] }[]} reports
 * @param {number} suiteSeconds the whole run's wall time (builds and tests)
 * @param {{ warnMinutes: number, failMinutes: number }} budget
 * @returns {{ lines: string[], verdict: "ok" | "warn" | "fail", message?: string, tests: number, assertions: number }}
 */
export function summarizeTimes(reports, suiteSeconds, budget = BUDGET) {
  const lines = [];
  const s = (seconds) => seconds.toFixed(1).padStart(7);
  const files = reports.flatMap((r) => r.files.map((f) => ({ ...f, pkg: r.pkg })));
  const tests = files.flatMap((f) => f.tests.map((t) => ({ ...t, file: f.file })));

  const byPackage = new Map();
  for (const r of reports) {
    const p = byPackage.get(r.pkg) ?? { seconds: 0, files: 0, tests: 0, assertions: 0 };
    p.seconds += r.wallSeconds;
    p.files += r.files.length;
    for (const f of r.files) {
      p.tests += f.tests.length;
      p.assertions += f.tests.reduce((n, t) => n + t.assertions, 0);
    }
    byPackage.set(r.pkg, p);
  }
  lines.push("test wall time by package (seconds; vitest runs, builds not included):");
  lines.push(`  ${"package".padEnd(12)} ${"seconds".padStart(7)} ${"files".padStart(5)} ${"tests".padStart(5)} ${"asserts".padStart(7)}`);
  for (const [pkg, p] of [...byPackage].sort((a, b) => b[1].seconds - a[1].seconds)) {
    lines.push(`  ${pkg.padEnd(12)} ${s(p.seconds)} ${String(p.files).padStart(5)} ${String(p.tests).padStart(5)} ${String(p.assertions).padStart(7)}`);
  }
  const total = [...byPackage.values()].reduce((t, p) => ({ seconds: t.seconds + p.seconds, files: t.files + p.files, tests: t.tests + p.tests, assertions: t.assertions + p.assertions }), { seconds: 0, files: 0, tests: 0, assertions: 0 });
  lines.push(`  ${"all".padEnd(12)} ${s(total.seconds)} ${String(total.files).padStart(5)} ${String(total.tests).padStart(5)} ${String(total.assertions).padStart(7)}`);

  const slowFiles = [...files].sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST);
  lines.push(`the ${slowFiles.length} slowest test files (seconds, with hooks):`);
  for (const f of slowFiles) lines.push(`  ${s(f.seconds)}  ${f.file}`);
  const slowTests = [...tests].sort((a, b) => b.seconds - a.seconds).slice(0, SLOWEST);
  lines.push(`the ${slowTests.length} slowest tests (seconds):`);
  for (const t of slowTests) lines.push(`  ${s(t.seconds)}  ${t.file} > ${t.name}`);

  const minutes = suiteSeconds / 60;
  const named = slowFiles.slice(0, 5).map((f) => `${f.file} (${f.seconds.toFixed(0)} s)`).join(", ");
  lines.push(`whole run: ${minutes.toFixed(1)} min (builds and tests); budget: warn past ${budget.warnMinutes} min, fail past ${budget.failMinutes} min (tools/ci/testTimes.mjs)`);
  if (minutes > budget.failMinutes) {
    const message = `the suite took ${minutes.toFixed(1)} min, past its ${budget.failMinutes} min limit (CI stops at 90): make the slowest files faster: ${named}`;
    return { lines, verdict: "fail", message, tests: total.tests, assertions: total.assertions };
  }
  if (minutes > budget.warnMinutes) {
    const message = `the suite took ${minutes.toFixed(1)} min, past its ${budget.warnMinutes} min budget: the slowest files are ${named}`;
    return { lines, verdict: "warn", message, tests: total.tests, assertions: total.assertions };
  }
  return { lines, verdict: "ok", tests: total.tests, assertions: total.assertions };
}
