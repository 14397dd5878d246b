import { ALPHA_TIE_TOLERANCE, DEFAULT_SELECTION_OPTIONS, type SelectionOptions } from "./selectionOptions.js";

/** One chunk set as selection sees it: its position in re-rank order and α per metric. */
export interface SelectionCandidate {
  /** Caller's id for the set (echoed back in the explanation). */
  readonly id: string;
  /** Token count of the set's text, used only with `tokenBudget`. */
  readonly tokens?: number;
}

export interface SelectionInput {
  /** Chunk sets in re-rank order (index 0 = best re-ranked). */
  readonly sets: readonly SelectionCandidate[];
  /** α per metric: `alphas[metric][i]` belongs to `sets[i]`. Metrics are listed in `metrics` order. */
  readonly metrics: readonly string[];
  readonly alphas: Readonly<Record<string, readonly number[]>>;
}

/** How one metric voted: its ordering, its largest drop and which sets it selected. */
export interface MetricVerdict {
  readonly metric: string;
  /** Set indices sorted by α descending (ties: re-rank order). */
  readonly order: readonly number[];
  /** Size of the largest drop between consecutive α in `order` (0 with a single set). */
  readonly largestDrop: number;
  /** Number of sets above the largest drop (the elbow position). */
  readonly dropAfter: number;
  /** True when `largestDrop > tau`, i.e. the metric selected every set above its elbow. */
  readonly dropExceedsTau: boolean;
  /** Set indices this metric selected. */
  readonly selected: readonly number[];
  /** Set indices holding the maximum α (all of them get this metric's argmax vote). */
  readonly argmax: readonly number[];
}

export type SelectionReason =
  | "top-voted" // S*: most metrics put it at argmax α
  | "selected-by-votes" // chosen by ≥ minVotes metrics
  | "fallback-top-reranked" // every α < ε: the model ignored the context; keep the best re-ranked set
  | "too-few-votes" // dropped: fewer than minVotes metrics selected it
  | "over-max-sets" // dropped: would exceed maxSets
  | "over-token-budget" // dropped: would exceed tokenBudget
  | "context-ignored" // dropped: every α < ε and it is not the top re-ranked set
  | "screened"; // dropped: an approximate screening pass left it out (see markScreened)

export interface SetDecision {
  readonly index: number;
  readonly id: string;
  readonly kept: boolean;
  readonly reason: SelectionReason;
  /** Metrics whose argmax α is this set. */
  readonly argmaxVotes: readonly string[];
  /** Metrics that selected this set (above their elbow, or their top set). */
  readonly selectedBy: readonly string[];
  readonly meanAlpha: number;
  /** Human-readable sentence for reports and CLI output. */
  readonly explanation: string;
}

export interface SelectionResult {
  /** Kept set indices, S* first, then in re-rank order. */
  readonly kept: readonly number[];
  /** Index of S*. */
  readonly topVoted: number;
  /** True when every α was below ε, so only the top re-ranked set was kept. */
  readonly contextIgnored: boolean;
  readonly perMetric: readonly MetricVerdict[];
  /** One decision per set, in re-rank order. */
  readonly decisions: readonly SetDecision[];
  readonly options: Required<SelectionOptions>;
}

/**
 * The `elbow` strategy: S* by argmax votes, each metric selects the sets above its largest α drop when that
 * drop exceeds τ, and sets selected by ≥ minVotes metrics join S*. Every decision carries its reason.
 */
export function selectChunkSets(input: SelectionInput, options: SelectionOptions = {}): SelectionResult {
  validateInput(input);
  const opts = resolveOptions(options, input.metrics.length);
  const n = input.sets.length;
  const meanAlpha = input.sets.map((_, i) => mean(input.metrics.map((m) => input.alphas[m]![i]!)));
  const perMetric = input.metrics.map((m) => judgeMetric(m, input.alphas[m]!, opts.tau));

  const argmaxVotes = input.sets.map(() => [] as string[]);
  const selectedBy = input.sets.map(() => [] as string[]);
  for (const verdict of perMetric) {
    for (const i of verdict.argmax) argmaxVotes[i]!.push(verdict.metric);
    for (const i of verdict.selected) selectedBy[i]!.push(verdict.metric);
  }

  const contextIgnored = input.metrics.every((m) => input.alphas[m]!.every((a) => a < opts.epsilon));
  const topVoted = contextIgnored ? 0 : pickTopVoted(n, argmaxVotes, meanAlpha);

  const reasons: SelectionReason[] = new Array(n);
  const kept: number[] = [topVoted];
  reasons[topVoted] = contextIgnored ? "fallback-top-reranked" : "top-voted";
  let tokensUsed = input.sets[topVoted]!.tokens ?? 0;

  const candidates = [...Array(n).keys()]
    .filter((i) => i !== topVoted)
    .sort((a, b) => selectedBy[b]!.length - selectedBy[a]!.length || meanAlpha[b]! - meanAlpha[a]! || a - b);
  for (const i of candidates) {
    if (contextIgnored) {
      reasons[i] = "context-ignored";
    } else if (selectedBy[i]!.length < opts.minVotes) {
      reasons[i] = "too-few-votes";
    } else if (kept.length >= opts.maxSets) {
      reasons[i] = "over-max-sets";
    } else if (tokensUsed + (input.sets[i]!.tokens ?? 0) > opts.tokenBudget) {
      reasons[i] = "over-token-budget";
    } else {
      reasons[i] = "selected-by-votes";
      kept.push(i);
      tokensUsed += input.sets[i]!.tokens ?? 0;
    }
  }

  const keptSet = new Set(kept);
  const decisions = input.sets.map((set, index) => {
    const decision = {
      index,
      id: set.id,
      kept: keptSet.has(index),
      reason: reasons[index]!,
      argmaxVotes: argmaxVotes[index]!,
      selectedBy: selectedBy[index]!,
      meanAlpha: meanAlpha[index]!,
    };
    return { ...decision, explanation: explain(decision, input.metrics.length, opts) };
  });

  return {
    kept: [topVoted, ...kept.slice(1).sort((a, b) => a - b)],
    topVoted,
    contextIgnored,
    perMetric,
    decisions,
    options: opts,
  };
}

function judgeMetric(metric: string, alpha: readonly number[], tau: number): MetricVerdict {
  const order = alpha.map((_, i) => i).sort((a, b) => alpha[b]! - alpha[a]! || a - b);
  const top = alpha[order[0]!]!;
  const argmax = order.filter((i) => top - alpha[i]! <= ALPHA_TIE_TOLERANCE);
  let largestDrop = 0;
  let dropAfter = 1;
  for (let k = 0; k + 1 < order.length; k++) {
    const drop = alpha[order[k]!]! - alpha[order[k + 1]!]!;
    // Strictly greater: with equal drops the first (highest) elbow wins, keeping the selection small.
    if (drop > largestDrop + ALPHA_TIE_TOLERANCE) {
      largestDrop = drop;
      dropAfter = k + 1;
    }
  }
  const dropExceedsTau = largestDrop > tau;
  const selected = dropExceedsTau ? order.slice(0, dropAfter) : order.slice(0, 1);
  return { metric, order, largestDrop, dropAfter: dropExceedsTau ? dropAfter : 1, dropExceedsTau, selected, argmax };
}

/** Most argmax votes; ties broken by higher mean α, then by re-rank order. */
function pickTopVoted(n: number, argmaxVotes: readonly string[][], meanAlpha: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < n; i++) {
    const votes = argmaxVotes[i]!.length - argmaxVotes[best]!.length;
    if (votes > 0 || (votes === 0 && meanAlpha[i]! - meanAlpha[best]! > ALPHA_TIE_TOLERANCE)) best = i;
  }
  return best;
}

function explain(
  d: Omit<SetDecision, "explanation">,
  metricCount: number,
  opts: Required<SelectionOptions>,
): string {
  const votes = `${d.selectedBy.length}/${metricCount} metrics selected it`;
  const argmax = d.argmaxVotes.length > 0 ? `; top α on ${d.argmaxVotes.join(", ")}` : "";
  switch (d.reason) {
    case "top-voted":
      return `kept as S*: highest α on ${d.argmaxVotes.length}/${metricCount} metrics (${d.argmaxVotes.join(", ") || "tie broken by mean α and re-rank order"})`;
    case "selected-by-votes":
      return `kept: ${votes} (≥ ${opts.minVotes})${argmax}`;
    case "fallback-top-reranked":
      return `kept as the top re-ranked set: every α < ε = ${opts.epsilon}, so the answer did not depend on any set`;
    case "too-few-votes":
      return `dropped: ${votes} (< ${opts.minVotes})${argmax}`;
    case "over-max-sets":
      return `dropped: ${votes}, but maxSets = ${opts.maxSets} was reached`;
    case "over-token-budget":
      return `dropped: ${votes}, but it would exceed the token budget of ${opts.tokenBudget}`;
    case "context-ignored":
      return `dropped: every α < ε = ${opts.epsilon} (the model ignored the context)`;
    case "screened":
      return "dropped: screened out, not regenerated (α = 0 on every metric)";
  }
}

function resolveOptions(options: SelectionOptions, metricCount: number): Required<SelectionOptions> {
  const o = { ...DEFAULT_SELECTION_OPTIONS, ...stripUndefined(options) };
  if (!(Number.isFinite(o.tau) && o.tau >= 0)) throw new RangeError(`selectChunkSets: tau must be a finite number ≥ 0, got ${o.tau}`);
  if (!(Number.isFinite(o.epsilon) && o.epsilon >= 0)) throw new RangeError(`selectChunkSets: epsilon must be a finite number ≥ 0, got ${o.epsilon}`);
  if (!Number.isInteger(o.minVotes) || o.minVotes < 1 || o.minVotes > metricCount) {
    throw new RangeError(
      `selectChunkSets: minVotes must be an integer in [1, ${metricCount}] (the number of metrics), got ${o.minVotes}`,
    );
  }
  if (!(o.maxSets >= 1) || (Number.isFinite(o.maxSets) && !Number.isInteger(o.maxSets))) {
    throw new RangeError(`selectChunkSets: maxSets must be an integer ≥ 1, got ${o.maxSets}`);
  }
  if (!(o.tokenBudget > 0)) throw new RangeError(`selectChunkSets: tokenBudget must be > 0, got ${o.tokenBudget}`);
  return o;
}

function validateInput(input: SelectionInput): void {
  const n = input.sets.length;
  if (n === 0) throw new RangeError("selectChunkSets: no chunk sets to select from; retrieval returned nothing");
  if (input.metrics.length === 0) throw new RangeError("selectChunkSets: at least one metric is needed");
  if (new Set(input.metrics).size !== input.metrics.length) {
    throw new RangeError(`selectChunkSets: metrics listed twice in [${input.metrics.join(", ")}]`);
  }
  for (const m of input.metrics) {
    const a = input.alphas[m];
    if (!a) throw new RangeError(`selectChunkSets: no α values for metric "${m}"`);
    if (a.length !== n) throw new RangeError(`selectChunkSets: metric "${m}" has ${a.length} α values for ${n} sets`);
    const bad = a.findIndex((x) => typeof x !== "number" || !Number.isFinite(x));
    if (bad >= 0) throw new RangeError(`selectChunkSets: α of set ${bad} on "${m}" is ${a[bad]}; α must be finite`);
  }
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / values.length;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
