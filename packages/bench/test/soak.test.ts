// `attr-rag soak` in CI: three minutes of the mixed load under a fixed seed's faults end with every promise
// kept; and the checker can fail: a short soak with deliberate defects switched on in every process must be
// reported by exactly the rules those defects break. Faults are off there, so nothing but the defects can
// explain a violation.
import { describe, expect, it } from "vitest";
import { natsServerMissing } from "@attr-rag/nats";
import { runSoak } from "../src/index.js";

const missing = natsServerMissing();
const REPLICA_RULES = ["replica-holds-acknowledged", "replicas-identical"];
const RESULT_RULES = ["batch-ends", "batch-one-result-per-item"];

describe.skipIf(missing !== undefined && process.env.CI !== "true")(`soak${missing ? ` (skipped: ${missing})` : ""}`, () => {
  // Seed 7 draws all four kinds (kill, pause, late restart, nats-server restart) over both gateways, the
  // selector, both workers and three of the four index replicas.
  it("soak - 3 minutes of mixed load under seed 7's faults: every fault applied, and no promise broken", async () => {
    const report = await runSoak({ seed: 7, minutes: 3, faultsPerMinute: 4 });
    expect(report.faults.errors).toEqual([]);
    expect(report.faults.applied).toBe(report.faults.scheduled);
    expect(report.faults.scheduled).toBeGreaterThanOrEqual(8);
    for (const kind of ["kill", "pause", "late-restart", "nats-restart"]) expect(report.faults.by_kind[kind], kind).toBeGreaterThan(0);
    for (const kind of ["ask", "search", "ingest", "delete", "batch.create"]) expect(report.operations[kind]?.OK ?? 0, kind).toBeGreaterThan(0);
    expect(report.history.batches.filter((b) => b.state === "completed").length).toBeGreaterThan(0);
    expect(report.history.webhooks.length).toBeGreaterThan(0);
    expect(report.violations).toEqual([]);
  }, 600_000);

  it("soak - deliberate defects (a replica skips a document's log entries, a gateway loses a result) are each reported by their own rules, and by nothing else", async () => {
    const report = await runSoak({ seed: 2, minutes: 0.4, faultsPerMinute: 0, defect: "replica-skips-entry,result-lost", recoveryMs: 45_000 });
    expect(report.faults.applied).toBe(0);
    expect(report.operations.ingest?.OK ?? 0).toBeGreaterThan(5);
    expect(report.operations.ask?.OK ?? 0).toBeGreaterThan(0);
    const rules = new Set(report.violations.map((v) => v.rule));
    expect([...rules].filter((r) => REPLICA_RULES.includes(r)).length, JSON.stringify(report.violations)).toBeGreaterThan(0);
    expect([...rules].filter((r) => RESULT_RULES.includes(r)).length, JSON.stringify(report.violations)).toBeGreaterThan(0);
    expect([...rules].filter((r) => !REPLICA_RULES.includes(r) && !RESULT_RULES.includes(r)), JSON.stringify(report.violations)).toEqual([]);
    for (const v of report.violations.filter((x) => x.rule === "replica-holds-acknowledged")) expect(v.message).toMatch(/^replica \d\.2 holds /);
  }, 300_000);
});
