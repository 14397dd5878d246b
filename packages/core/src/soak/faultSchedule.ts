// The faults of a soak run, drawn from its seed before it starts: the same seed, duration, rate and targets give
// the same schedule on every machine, so a violation found once can be replayed. Arrivals are a Poisson process
// (exponential gaps at the given rate); each picks a target and a kind. A target holds at most one fault at a
// time, so a process is never paused while it is down, and every fault has ended before the recovery window.
import { InputError } from "../input/inputError.js";
import { SeededRandom } from "../coalitions/seededRandom.js";

export const FAULT_KINDS = ["kill", "pause", "late-restart", "nats-restart"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  /** 1-based, in schedule order: what a violation's report names. */
  readonly id: number;
  /** Milliseconds after the run started. */
  readonly atMs: number;
  /**
   * kill: SIGKILL, restarted after durationMs; late-restart: the same with a long delay (minutes); pause:
   * SIGSTOP, SIGCONT after durationMs; nats-restart: nats-server SIGKILLed and started again on its own store
   * after durationMs.
   */
  readonly kind: FaultKind;
  /** The process's name in the cluster (`gateway`, `worker-2`, `index-1.2`, …), or `nats`. */
  readonly target: string;
  readonly durationMs: number;
}

export interface FaultScheduleOptions {
  readonly seed: number;
  /** Faults are drawn in [0, faultWindowMs); each ends (restart, SIGCONT) before it closes. */
  readonly faultWindowMs: number;
  readonly faultsPerMinute: number;
  /** Processes faults may hit (besides `nats`, which only nats-restart hits). */
  readonly targets: readonly string[];
  /** Which kinds to draw, each equally likely; default all. */
  readonly kinds?: readonly FaultKind[];
  /** Down or paused for this long, drawn uniformly; default 1–8 s. */
  readonly shortMs?: readonly [number, number];
  /** late-restart: down this long; default 30–120 s. */
  readonly lateMs?: readonly [number, number];
}

export function faultSchedule(o: FaultScheduleOptions): Fault[] {
  if (!(o.faultsPerMinute >= 0) || !Number.isFinite(o.faultsPerMinute)) throw new InputError(`faults per minute must be a number >= 0, got ${o.faultsPerMinute}`);
  if (!(o.faultWindowMs >= 0)) throw new InputError(`the fault window must be >= 0 ms, got ${o.faultWindowMs}`);
  const kinds = o.kinds ?? FAULT_KINDS;
  if (kinds.length === 0) throw new InputError("no fault kinds to draw from");
  if (o.targets.length === 0 && kinds.some((k) => k !== "nats-restart")) throw new InputError("no processes to fault");
  const [shortLo, shortHi] = o.shortMs ?? [1_000, 8_000];
  const [lateLo, lateHi] = o.lateMs ?? [30_000, 120_000];
  const random = new SeededRandom(o.seed);
  const busyUntil = new Map<string, number>();
  const faults: Fault[] = [];
  if (o.faultsPerMinute === 0) return faults;
  const meanGapMs = 60_000 / o.faultsPerMinute;
  for (let at = -Math.log(1 - random.next()) * meanGapMs; at < o.faultWindowMs; at += -Math.log(1 - random.next()) * meanGapMs) {
    const kind = kinds[random.below(kinds.length)]!;
    const [lo, hi] = kind === "late-restart" ? [lateLo, lateHi] : [shortLo, shortHi];
    const durationMs = Math.round(lo + random.next() * (hi - lo));
    // Free targets only, and the fault must end inside the window; otherwise this arrival draws nothing.
    const candidates = kind === "nats-restart" ? ["nats"] : o.targets;
    const free = candidates.filter((t) => (busyUntil.get(t) ?? -1) <= at && at + durationMs < o.faultWindowMs);
    // nats down stops every role's NATS traffic: never overlap it with another fault's restart bookkeeping.
    if (free.length === 0 || (kind === "nats-restart" && [...busyUntil.values()].some((until) => until > at))) continue;
    if (kind !== "nats-restart" && (busyUntil.get("nats") ?? -1) > at) continue;
    const target = free[random.below(free.length)]!;
    const atMs = Math.round(at);
    busyUntil.set(target, atMs + durationMs);
    faults.push({ id: faults.length + 1, atMs, kind, target, durationMs });
  }
  return faults;
}

/** Faults per kind, for the report. */
export function faultsByKind(faults: readonly Fault[]): Record<FaultKind, number> {
  const counts = Object.fromEntries(FAULT_KINDS.map((k) => [k, 0])) as Record<FaultKind, number>;
  for (const f of faults) counts[f.kind]++;
  return counts;
}
