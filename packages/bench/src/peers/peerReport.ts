// The bench's comparison and summary: every system's answers against our naive's, token by token (where one
// first differs, naive's margin there says whether it was a near-tie), its tokens/s against the device
// ceiling, its multiply-adds, and the headline ratio: the faster peer's wall over our fastest exact one's.
import { compareSequences } from "@attr-rag/engine";
import type { DeviceCeiling } from "../engine/deviceCeiling.js";
import { OUR_SYSTEMS, type BenchSystem, type SystemRun } from "./peerTypes.js";

/** Multiply-adds of one token through the transformer body, and of one output row (hidden width × vocabulary). */
export interface ModelShape {
  body_macs_per_token: number;
  vocab_row_macs: number;
}

export interface SystemReport {
  approximate?: true;
  /** Median over the rounds (--runs), and every round's wall. */
  wall_ms: number;
  wall_runs_ms: number[];
  /** Whether every round gave the same answers (greedy decoding should). */
  answers_same_every_run: boolean;
  tokens_evaluated: number;
  decode_calls: number | null;
  /** tokens_evaluated per second of wall, and that over the ceiling's tokens/s. */
  tokens_per_s: number;
  ceiling_fraction: number | null;
  /** Rows that went through the vocabulary: one per generated token, plus the end-of-generation row where an answer ended there. */
  output_rows: number;
  /** tokens_evaluated × body + output_rows × vocabulary row (attention not counted). */
  macs: number;
  /** Answers token-identical to our naive's (null for naive itself or when naive did not run). */
  identical_to_naive: number | null;
  answers: number;
  first_divergences: { seq: number; step: number; naive_margin: number }[] | null;
  /** kv-reuse: occluded answers identical to naive's and mean first divergence step (full fidelity: `bench occlusion`). */
  fidelity?: { occluded_identical: number; mean_first_divergence: number | null };
  peak_rss_mib: number;
  setup: string;
}

export interface PeersSummary {
  fastest_exact: string | null;
  faster_peer: string | null;
  /** faster peer's wall ÷ our fastest exact strategy's wall. */
  speedup: number | null;
  /** The same ratio in multiply-adds: what equal efficiency per multiply-add would give. */
  macs_ratio: number | null;
  /** Largest naive margin where an exact system's answer first differs from naive's (0: none differ). */
  max_divergence_margin: number | null;
}

/** A system's rounds as one run: the median wall, the first round's answers, the highest peak RSS. */
export interface MergedRun extends SystemRun {
  wall_runs_ms: number[];
  answers_same_every_run: boolean;
}

export function mergeRuns(rounds: readonly SystemRun[]): MergedRun {
  const first = rounds[0];
  if (!first) throw new RangeError("mergeRuns: no rounds");
  const walls = rounds.map((r) => r.wall_ms);
  const sorted = [...walls].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  const same = rounds.every((r) => JSON.stringify(r.answers) === JSON.stringify(first.answers));
  return { ...first, wall_ms: median, wall_runs_ms: walls, answers_same_every_run: same, peak_rss_mib: Math.max(...rounds.map((r) => r.peak_rss_mib)) };
}

/** Whether a system is one of our strategies (not a peer). */
export const isOurs = (s: string): s is BenchSystem => (OUR_SYSTEMS as readonly string[]).includes(s);

const EOG_ROW = (answer: number[], maxTokens: number) => (answer.length < maxTokens ? 1 : 0);

export function reportSystems(
  runs: readonly MergedRun[],
  shape: ModelShape,
  maxTokens: number,
  ceiling: DeviceCeiling | undefined,
): { systems: Record<string, SystemReport>; summary: PeersSummary } {
  const naive = runs.find((r) => r.system === "naive");
  const reference = naive?.answers.map((tokens, i) => ({ tokens: Int32Array.from(tokens), margins: Float32Array.from(naive.margins?.[i] ?? []) }));
  const systems: Record<string, SystemReport> = {};
  let maxMargin: number | null = null;
  for (const r of runs) {
    const approximate = r.system === "kv-reuse";
    const cmp =
      reference && r.system !== "naive"
        ? compareSequences(reference, r.answers.map((tokens) => ({ tokens: Int32Array.from(tokens), margins: new Float32Array(0) })))
        : undefined;
    const divergences = cmp?.divergences.map((d) => ({ seq: d.seq, step: d.step, naive_margin: d.referenceMargin })) ?? null;
    if (divergences && !approximate) maxMargin = Math.max(maxMargin ?? 0, ...divergences.map((d) => d.naive_margin));
    const outputRows = r.answers.reduce((n, a) => n + a.length + EOG_ROW(a, maxTokens), 0);
    const tokensPerS = (r.tokens_evaluated * 1000) / r.wall_ms;
    const occludedDiv = divergences?.filter((d) => d.seq > 0) ?? [];
    systems[r.system] = {
      ...(approximate ? { approximate: true as const } : {}),
      wall_ms: r.wall_ms,
      wall_runs_ms: r.wall_runs_ms,
      answers_same_every_run: r.answers_same_every_run,
      tokens_evaluated: r.tokens_evaluated,
      decode_calls: r.decode_calls,
      tokens_per_s: tokensPerS,
      ceiling_fraction: ceiling && ceiling.tokens_per_s > 0 ? tokensPerS / ceiling.tokens_per_s : null,
      output_rows: outputRows,
      macs: r.tokens_evaluated * shape.body_macs_per_token + outputRows * shape.vocab_row_macs,
      identical_to_naive: cmp?.identical ?? null,
      answers: r.answers.length,
      first_divergences: divergences,
      ...(approximate && cmp
        ? {
            fidelity: {
              occluded_identical: (r.answers.length - 1 - occludedDiv.length) / Math.max(1, r.answers.length - 1),
              mean_first_divergence: occludedDiv.length > 0 ? occludedDiv.reduce((n, d) => n + d.step, 0) / occludedDiv.length : null,
            },
          }
        : {}),
      peak_rss_mib: r.peak_rss_mib,
      setup: r.setup,
    };
  }
  const fastest = (names: string[]) => names.reduce<string | null>((best, n) => (best === null || systems[n]!.wall_ms < systems[best]!.wall_ms ? n : best), null);
  const fastestExact = fastest(Object.keys(systems).filter((s) => isOurs(s) && !systems[s]!.approximate));
  const fasterPeer = fastest(Object.keys(systems).filter((s) => !isOurs(s)));
  const both = fastestExact !== null && fasterPeer !== null;
  return {
    systems,
    summary: {
      fastest_exact: fastestExact,
      faster_peer: fasterPeer,
      speedup: both ? systems[fasterPeer]!.wall_ms / systems[fastestExact]!.wall_ms : null,
      macs_ratio: both ? systems[fasterPeer]!.macs / systems[fastestExact]!.macs : null,
      max_divergence_margin: naive ? maxMargin : null,
    },
  };
}

