// The cooperative game the coalition methods play: players are the chunk sets 0..n-1 (in prompt order) and
// v(C) is a utility of the answer given only the sets in C (for Attr-RAG: the teacher-forced log-likelihood
// of A_full). Evaluating v is the expensive part (a forward pass per coalition), so every method asks for
// coalitions in batches (the engine scores a batch in shared passes) and the game remembers each value:
// no coalition is scored twice in one request.

/** Set indices in ascending order. */
export type Coalition = readonly number[];

/** Scores a batch of coalitions; values in the same order. May throw (cancel, engine error). */
export type Utility = (coalitions: readonly Coalition[]) => Promise<readonly number[]>;

export class CoalitionGame {
  readonly n: number;
  readonly #utility: Utility;
  readonly #values = new Map<string, number>();
  #calls = 0;
  #batches = 0;

  constructor(n: number, utility: Utility) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`a coalition game needs at least one chunk set, got ${n}`);
    this.n = n;
    this.#utility = utility;
  }

  /** Distinct coalitions the utility was asked for (what a method "costs"). */
  get utilityCalls(): number {
    return this.#calls;
  }

  /** Batches sent to the utility. */
  get batches(): number {
    return this.#batches;
  }

  /** v for every coalition, asking the utility (in one batch) only for those not known yet. */
  async values(coalitions: readonly Coalition[]): Promise<number[]> {
    const normalised = coalitions.map((c) => this.#normalise(c));
    const keys = normalised.map((c) => c.join(","));
    const missing = new Map<string, Coalition>();
    keys.forEach((k, i) => {
      if (!this.#values.has(k) && !missing.has(k)) missing.set(k, normalised[i]!);
    });
    if (missing.size > 0) {
      const asked = [...missing.values()];
      const got = await this.#utility(asked);
      if (got.length !== asked.length) throw new Error(`the utility returned ${got.length} values for ${asked.length} coalitions`);
      [...missing.keys()].forEach((k, i) => {
        const v = got[i]!;
        if (!Number.isFinite(v)) throw new RangeError(`the utility of coalition {${asked[i]!.join(", ")}} is ${v}, not a finite number`);
        this.#values.set(k, v);
      });
      this.#calls += asked.length;
      this.#batches++;
    }
    return keys.map((k) => this.#values.get(k)!);
  }

  async value(coalition: Coalition): Promise<number> {
    return (await this.values([coalition]))[0]!;
  }

  /** The grand coalition {0..n-1}. */
  get all(): Coalition {
    return Array.from({ length: this.n }, (_, i) => i);
  }

  /** The members in ascending order, once each; refuses what is not a set index. */
  #normalise(c: Coalition): Coalition {
    for (const i of c) {
      if (!Number.isInteger(i) || i < 0 || i >= this.n) throw new RangeError(`coalition member ${i} is not a set index in [0, ${this.n})`);
    }
    return [...new Set(c)].sort((a, b) => a - b);
  }
}

/** The coalition of the players whose bit is set in mask (bit i = set i). */
export function coalitionOfMask(mask: number, n: number): number[] {
  const c: number[] = [];
  for (let i = 0; i < n; i++) if (mask & (1 << i)) c.push(i);
  return c;
}

/** Members of the coalition a mask stands for. */
export function popcount(mask: number): number {
  let c = 0;
  for (let x = mask; x; x &= x - 1) c++;
  return c;
}
