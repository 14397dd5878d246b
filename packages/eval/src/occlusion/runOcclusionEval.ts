// The run behind `attr-rag eval occlusion`: each question once with the exact reference strategy and once per
// APPROXIMATE strategy, every approximate run compared with the exact one (selection, α, work, time).
import type { AskEvent, AskRequest } from "@attr-rag/contracts";
import { InputError } from "@attr-rag/core";
import { APPROXIMATE_STRATEGIES, EXACT_STRATEGIES } from "@attr-rag/engine";
import { progressBar } from "@attr-rag/telemetry";
import type { EvalQuestion } from "../evalInputs.js";
import { occlusionOutcome, type OcclusionOutcome } from "./occlusionOutcome.js";
import { compareWithExact, type QuestionComparison, type StrategySummary } from "./occlusionSummary.js";

export const APPROXIMATE_EVAL_STRATEGIES = [...APPROXIMATE_STRATEGIES, "screen"] as readonly string[];
const ALL = [...EXACT_STRATEGIES, ...APPROXIMATE_EVAL_STRATEGIES] as readonly string[];

/** `--strategies speculative,kv-reuse,screen` → the one exact reference and the approximate strategies. */
export function parseStrategies(list: string): { reference: string; approximate: string[] } {
  const names = list.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !ALL.includes(n));
  if (unknown.length > 0) throw new InputError(`--strategies: unknown ${unknown.join(", ")}; use ${ALL.join(", ")}`, 2);
  const exact = names.filter((n) => !APPROXIMATE_EVAL_STRATEGIES.includes(n));
  const approximate = names.filter((n) => APPROXIMATE_EVAL_STRATEGIES.includes(n));
  if (exact.length !== 1) throw new InputError(`--strategies needs exactly one exact strategy as the reference (${EXACT_STRATEGIES.join(", ")}), got ${exact.length}`, 2);
  if (approximate.length === 0) throw new InputError(`--strategies needs at least one approximate strategy (${APPROXIMATE_EVAL_STRATEGIES.join(", ")})`, 2);
  return { reference: exact[0]!, approximate: [...new Set(approximate)] };
}

export interface OcclusionEvalOptions {
  readonly questions: readonly EvalQuestion[];
  readonly reference: string;
  readonly approximate: readonly string[];
  /** The Ask of one question under one strategy (the caller's flags). */
  readonly request: (strategy: string, question: EvalQuestion, requestId: string) => AskRequest;
  readonly ask: (request: AskRequest, onEvent: (e: AskEvent) => void, signal: AbortSignal) => Promise<void>;
  /** The message of a failed Ask, as the caller words pipeline errors. */
  readonly describeError: (err: unknown) => string;
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
}

export interface OcclusionFailure {
  question_id: string;
  strategy: string;
  error: string;
}

/** Compares every approximate strategy with the reference, question by question; a failed question is skipped. */
export async function compareStrategies(o: OcclusionEvalOptions): Promise<{ comparisons: QuestionComparison[]; failures: OcclusionFailure[] }> {
  const bar = progressBar("eval occlusion");
  const comparisons: QuestionComparison[] = [];
  const failures: OcclusionFailure[] = [];
  const total = o.questions.length * (1 + o.approximate.length);
  let done = 0;
  for (const [qi, q] of o.questions.entries()) {
    let current = o.reference;
    const once = async (strategy: string): Promise<OcclusionOutcome> => {
      current = strategy;
      const events: AskEvent[] = [];
      await o.ask(o.request(strategy, q, `eval-occ-${q.id}-${strategy}`), (e) => events.push(e), o.signal);
      bar.update(++done, total, `${q.id} ${strategy}`);
      return occlusionOutcome(events);
    };
    try {
      const exact = await once(o.reference);
      for (const s of o.approximate) comparisons.push(compareWithExact(q.id, s, exact, await once(s)));
    } catch (err) {
      if (o.signal.aborted) throw new InputError("interrupted", 130, { cause: err });
      const message = o.describeError(err);
      failures.push({ question_id: q.id, strategy: current, error: message });
      o.log(`eval occlusion: question ${q.id}, ${current}: ${message} (question skipped)`);
      done = (qi + 1) * (1 + o.approximate.length);
    }
  }
  bar.done();
  if (comparisons.length === 0) throw new InputError(`no question could be compared (${failures.length} failed; the first: ${failures[0]?.error ?? "?"})`, 1);
  return { comparisons, failures };
}

export function formatOcclusionTable(reference: string, summaries: readonly StrategySummary[]): string {
  const lines = [
    `reference: ${reference} (exact)`,
    "strategy (APPROXIMATE)   questions  same selection  kept Jaccard  α Spearman  work ÷ exact  time ÷ exact  screened",
  ];
  for (const s of summaries) {
    lines.push(
      `${s.strategy.padEnd(24)} ${String(s.questions).padStart(9)}  ${`${(100 * s.selection_agreement).toFixed(0)} %`.padStart(14)}  ${s.mean_kept_jaccard.toFixed(3).padStart(12)}  ` +
        `${(s.mean_alpha_spearman === null ? "–" : s.mean_alpha_spearman.toFixed(3)).padStart(10)}  ${s.work_ratio.toFixed(3).padStart(12)}  ${s.time_ratio.toFixed(3).padStart(12)}  ` +
        `${(s.strategy === "screen" ? `${(100 * s.screened_fraction).toFixed(0)} %` : "–").padStart(8)}`,
    );
  }
  return lines.join("\n");
}

/** What `eval occlusion` prints without --json: the table, mean |Δα| per strategy, and the skipped questions. */
export function occlusionEvalText(reference: string, summaries: readonly StrategySummary[], failures: readonly OcclusionFailure[]): string[] {
  const lines = [formatOcclusionTable(reference, summaries)];
  for (const s of summaries) {
    const d = Object.entries(s.mean_abs_delta_alpha).map(([m, v]) => `${m.replace("ATTRIBUTION_METRIC_", "").toLowerCase()} ${v.toFixed(3)}`).join(", ");
    lines.push(`${s.strategy}: mean |Δα| ${d}`);
  }
  if (failures.length > 0) lines.push(`${failures.length} question(s) failed and were skipped (see stderr)`);
  return lines;
}

