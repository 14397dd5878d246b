import type { Command } from "commander";
import { runSoak, soakOptionsFromFlags, soakText, SOAK_DEFECTS } from "@attr-rag/bench";

/** `attr-rag soak` (packages/bench/src/soak): a local cluster under seeded load and faults, then every promise checked. */
export function registerSoakCommand(program: Command): void {
  program.command("soak").summary("a local cluster under mixed load while its processes and nats-server fail at random; then every promise is checked").option("--minutes <x>", "minutes of load with faults", "3").option("--seed <n>", "seed of the load and the fault schedule", "1").option("--faults-per-minute <x>", "mean fault rate (0: the load alone)", "4").option("--recovery-seconds <x>", "longest wait, after the load, for batches and webhooks to settle", "120").option("--defect <names>", `switch on deliberate defects (comma-separated) to see them caught: ${SOAK_DEFECTS.join(", ")}`).option("--json", "print the report, with the whole history, as JSON")
    .action(async (o: { minutes: string; seed: string; faultsPerMinute: string; recoverySeconds: string; defect?: string; json?: boolean }) => {
      const report = await runSoak({ ...soakOptionsFromFlags(o), onProgress: (line) => process.stderr.write(`soak: ${line}\n`) });
      process.stdout.write(o.json === true ? `${JSON.stringify(report)}\n` : soakText(report));
      if (report.violations.length > 0) process.exitCode = 1;
    });
}
