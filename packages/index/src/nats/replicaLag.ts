/** How far a replica is behind its shard's ingest log. */
export interface ReplicaLag {
  /** Entries of its shard in the log that it has not applied. */
  readonly entries: number;
  /** Age of the oldest of them (0 when none). */
  readonly seconds: number;
}

/** The most a replica may lag and still answer searches (index serve --max-lag-entries, --max-lag-seconds). */
export interface ReplicaLagLimits {
  readonly entries: number;
  readonly seconds: number;
}

/**
 * Small on purpose: a replica this far behind answers without writes its peers already acknowledged. A burst
 * of writes applied at full speed stays within it; a replica that stalls (its embedder down, an entry it cannot
 * read) leaves its shard's queue group within a few seconds.
 */
export const DEFAULT_LAG_LIMITS: ReplicaLagLimits = { entries: 1_000, seconds: 5 };

/**
 * Whether a replica answers its shard's searches: it leaves the queue group when it is more than the limits
 * behind (or has stopped at an entry it cannot apply), and comes back once it is within half of both, so it
 * does not flap at the edge of a limit, nor stay out for good under a steady stream of writes (where some
 * entry is always a moment from being applied).
 */
export function shouldServe(serving: boolean, lag: ReplicaLag, limits: ReplicaLagLimits, stopped: boolean): boolean {
  if (stopped) return false;
  if (serving) return lag.entries <= limits.entries && lag.seconds <= limits.seconds;
  return lag.entries <= limits.entries / 2 && lag.seconds <= limits.seconds / 2;
}

export function validateLagLimits(limits: ReplicaLagLimits): ReplicaLagLimits {
  if (!Number.isInteger(limits.entries) || limits.entries < 0) throw new RangeError(`the replica lag limit in entries must be an integer ≥ 0, got ${limits.entries}`);
  if (!Number.isFinite(limits.seconds) || limits.seconds <= 0) throw new RangeError(`the replica lag limit in seconds must be a number > 0, got ${limits.seconds}`);
  return limits;
}
