// `attr-rag soak`'s flags: what each becomes, and a flag that is not what it takes is an error naming it.
import { describe, expect, it } from "vitest";
import { InputError } from "@attr-rag/core";
import { soakOptionsFromFlags } from "../src/index.js";

const flags = { minutes: "3", seed: "1", faultsPerMinute: "4" };

describe("soak flags", () => {
  it("soak flags - numbers, a fault rate of 0 (the load alone), recovery in seconds, and defects comma-separated", () => {
    expect(soakOptionsFromFlags(flags)).toEqual({ seed: 1, minutes: 3, faultsPerMinute: 4 });
    expect(soakOptionsFromFlags({ ...flags, minutes: "0.5", faultsPerMinute: "0", recoverySeconds: "30" })).toEqual({ seed: 1, minutes: 0.5, faultsPerMinute: 0, recoveryMs: 30_000 });
    expect(soakOptionsFromFlags({ ...flags, defect: "result-lost, replica-skips-entry" }).defect).toBe("result-lost,replica-skips-entry");
  });

  it("soak flags - a negative rate, no minutes, a fractional seed or an unknown defect is an InputError naming the flag", () => {
    const error = (f: Partial<typeof flags> & { defect?: string; recoverySeconds?: string }) => {
      try {
        soakOptionsFromFlags({ ...flags, ...f });
      } catch (err) {
        expect(err).toBeInstanceOf(InputError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(f)}`);
    };
    expect(error({ faultsPerMinute: "-1" })).toBe('--faults-per-minute must be a number ≥ 0, got "-1"');
    expect(error({ minutes: "0" })).toMatch(/^--minutes must be a number > 0/);
    expect(error({ seed: "1.5" })).toMatch(/^--seed must be an integer ≥ 0/);
    expect(error({ recoverySeconds: "soon" })).toMatch(/^--recovery-seconds must be a number > 0/);
    expect(error({ defect: "result-lost,replica-forgets" })).toBe('--defect must be replica-skips-entry or result-lost, got "replica-forgets"');
  });
});
