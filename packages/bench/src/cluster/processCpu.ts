import { readFileSync } from "node:fs";

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in these ticks on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;

/**
 * CPU seconds (user + system) a live process has used so far, from /proc/<pid>/stat; undefined where there
 * is no /proc or the process is gone. Benchmarks read it before and after a phase to show where the
 * machine's cores went.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return Number.isFinite(utime) && Number.isFinite(stime) ? (utime + stime) / TICKS_PER_SECOND : undefined;
  } catch {
    return undefined;
  }
}

/** CPU seconds used between two readings of the same named processes (missing readings drop out). */
export function cpuBetween(before: Record<string, number | undefined>, after: Record<string, number | undefined>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, a] of Object.entries(after)) {
    const b = before[name];
    if (a !== undefined && b !== undefined) out[name] = Math.round((a - b) * 100) / 100;
  }
  return out;
}
