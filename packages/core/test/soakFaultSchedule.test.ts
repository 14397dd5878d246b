import { describe, expect, it } from "vitest";
import { faultsByKind, faultSchedule } from "../src/soak/faultSchedule.js";

const TARGETS = ["gateway", "gateway-2", "index-0.1", "index-0.2", "index-1.1", "index-1.2", "worker-1", "worker-2", "selector"];

describe("soak fault schedule", () => {
  it("soak schedule - one seed gives one schedule; another seed another", () => {
    const o = { seed: 7, faultWindowMs: 10 * 60_000, faultsPerMinute: 4, targets: TARGETS };
    expect(faultSchedule(o)).toEqual(faultSchedule(o));
    expect(faultSchedule({ ...o, seed: 8 })).not.toEqual(faultSchedule(o));
  });

  it("soak schedule - about the asked rate over an hour, every kind drawn, a target never faulted twice at once, all over before the window closes", () => {
    const window = 60 * 60_000;
    const faults = faultSchedule({ seed: 54, faultWindowMs: window, faultsPerMinute: 5, targets: TARGETS });
    // 300 arrivals expected; some find their target busy and draw nothing.
    expect(faults.length).toBeGreaterThan(200);
    expect(faults.length).toBeLessThan(330);
    const kinds = faultsByKind(faults);
    for (const k of Object.values(kinds)) expect(k).toBeGreaterThan(0);
    expect(faults.filter((f) => f.kind === "nats-restart").every((f) => f.target === "nats")).toBe(true);
    for (const f of faults) expect(f.atMs + f.durationMs).toBeLessThan(window);
    const byTarget = new Map<string, typeof faults>();
    for (const f of faults) byTarget.set(f.target, [...(byTarget.get(f.target) ?? []), f]);
    for (const fs of byTarget.values()) for (let i = 1; i < fs.length; i++) expect(fs[i]!.atMs).toBeGreaterThanOrEqual(fs[i - 1]!.atMs + fs[i - 1]!.durationMs);
    // While NATS is down no other fault begins, and none is under way when it goes down.
    for (const n of faults.filter((f) => f.kind === "nats-restart")) {
      expect(faults.some((f) => f !== n && f.atMs < n.atMs + n.durationMs && f.atMs + f.durationMs > n.atMs)).toBe(false);
    }
    expect(faults.map((f) => f.id)).toEqual(faults.map((_, i) => i + 1));
  });

  it("soak schedule - only the kinds asked for; none at rate 0; bad options say what is wrong", () => {
    const pauses = faultSchedule({ seed: 1, faultWindowMs: 5 * 60_000, faultsPerMinute: 6, targets: TARGETS, kinds: ["pause"] });
    expect(pauses.length).toBeGreaterThan(10);
    expect(new Set(pauses.map((f) => f.kind))).toEqual(new Set(["pause"]));
    expect(faultSchedule({ seed: 1, faultWindowMs: 60_000, faultsPerMinute: 0, targets: TARGETS })).toEqual([]);
    expect(() => faultSchedule({ seed: 1, faultWindowMs: 60_000, faultsPerMinute: -1, targets: TARGETS })).toThrow(/faults per minute must be a number >= 0/);
    expect(() => faultSchedule({ seed: 1, faultWindowMs: 60_000, faultsPerMinute: 1, targets: [], kinds: ["kill"] })).toThrow(/no processes to fault/);
  });
});
