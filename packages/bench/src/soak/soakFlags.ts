// `attr-rag soak`'s flags as typed, checked here rather than in the CLI, which only passes them on.
import { nonNegativeInt, nonNegativeNumber, oneOf, positiveNumber } from "@attr-rag/core";

/** The deliberate defects a process switches on from ATTR_RAG_SOAK_DEFECT (index's log follower, batch's queue). */
export const SOAK_DEFECTS = ["replica-skips-entry", "result-lost"] as const;

export interface SoakFlags {
  readonly minutes: string;
  readonly seed: string;
  readonly faultsPerMinute: string;
  readonly recoverySeconds?: string;
  readonly defect?: string;
}

/** The soak's options from its flags; an InputError naming the flag when one is not what it takes. */
export function soakOptionsFromFlags(f: SoakFlags): { seed: number; minutes: number; faultsPerMinute: number; recoveryMs?: number; defect?: string } {
  return {
    seed: nonNegativeInt("--seed", f.seed),
    minutes: positiveNumber("--minutes", f.minutes),
    // 0: the load alone, no fault (how a failure is told apart from the faults that provoked it).
    faultsPerMinute: nonNegativeNumber("--faults-per-minute", f.faultsPerMinute),
    ...(f.recoverySeconds !== undefined ? { recoveryMs: positiveNumber("--recovery-seconds", f.recoverySeconds) * 1000 } : {}),
    // Several at once, comma-separated: one short run shows each caught by its own rules.
    ...(f.defect !== undefined ? { defect: f.defect.split(",").map((d) => oneOf("--defect", d.trim(), SOAK_DEFECTS)).join(",") } : {}),
  };
}
