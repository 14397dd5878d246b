// The soak report as a person reads it: what ran, which faults hit, and each violation with its rule, the
// operations that expose it and the seed that replays the run.
import type { SoakReport } from "./soakRun.js";

export function soakText(r: SoakReport): string {
  const lines = [
    `soak: seed ${r.soak.seed}, ${r.soak.minutes} min of load at ${r.soak.faults_per_minute} faults/min${r.soak.defect !== null ? `, defect ${r.soak.defect} switched on` : ""}`,
    `operations: ${Object.entries(r.operations).map(([kind, codes]) => `${kind} ${Object.entries(codes).map(([c, n]) => `${n} ${c}`).join(", ")}`).join("; ")}`,
    `faults: ${r.faults.applied} applied of ${r.faults.scheduled} scheduled (${Object.entries(r.faults.by_kind).map(([k, n]) => `${n} ${k}`).join(", ")})`,
    ...r.faults.errors.map((e) => `  fault ${e}`),
    ...r.faults.started_again.map((e) => `  started again, as a supervisor would: fault ${e}`),
  ];
  if (r.violations.length === 0) {
    lines.push("violations: none: every promise held");
  } else {
    lines.push(`violations: ${r.violations.length} (replay with --seed ${r.soak.seed})`);
    for (const v of r.violations) lines.push(`  ${v.rule}: ${v.message}${v.operationIds.length > 0 ? ` [operations ${v.operationIds.join(", ")}]` : ""}`);
  }
  return `${lines.join("\n")}\n`;
}
