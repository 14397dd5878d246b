// `attr-rag soak`'s checker can fail: a short soak with a defect switched on in every process (the second
// replica of each shard passes over every log entry of one document) must be reported, by the replica rules
// and by nothing else. Faults are off here, so nothing but the defect can explain a violation.
import { describe, expect, it } from "vitest";
import { natsServerMissing } from "@attr-rag/nats";
import { runSoak } from "../src/index.js";

const missing = natsServerMissing();

describe.skipIf(missing !== undefined && process.env.CI !== "true")(`soak${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("soak - a replica that skips a document's log entries is reported as replicas that differ and miss acknowledged writes, and nothing else is", async () => {
    const report = await runSoak({ seed: 2, minutes: 0.4, faultsPerMinute: 0, defect: "replica-skips-entry", recoveryMs: 60_000 });
    expect(report.faults.applied).toBe(0);
    expect(report.operations.ingest?.OK ?? 0).toBeGreaterThan(5);
    expect(report.operations.ask?.OK ?? 0).toBeGreaterThan(0);
    const rules = new Set(report.violations.map((v) => v.rule));
    expect(rules.size).toBeGreaterThan(0);
    expect([...rules].filter((r) => r !== "replica-holds-acknowledged" && r !== "replicas-identical"), JSON.stringify(report.violations)).toEqual([]);
    for (const v of report.violations.filter((x) => x.rule === "replica-holds-acknowledged")) expect(v.message).toMatch(/^replica \d\.2 holds /);
  }, 300_000);
});
