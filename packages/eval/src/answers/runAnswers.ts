// The run behind `attr-rag eval answers` (Table I/II): every question × method through the pipeline (the
// caller's `ask`: embedded or on a gateway), each answer scored against the gold one and judged, one row
// appended per answer; then the summary, summary.json and the optional HTML report.
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { AskEvent, AskRequest } from "@attr-rag/contracts";
import { InputError, scoreAnswer } from "@attr-rag/core";
import type { BenchRun } from "@attr-rag/bench";
import { progressBar } from "@attr-rag/telemetry";
import { storeErrorAsInput, type ChunkStore, type Embedder } from "@attr-rag/index";
import type { AnswerMethod } from "./answerMethods.js";
import { rowKey, RowWriter, type AnswerRow } from "./answerRows.js";
import { renderAnswersReport } from "./answersReport.js";
import { summarizeAnswers } from "./answersSummary.js";
import { askOutcome } from "./askOutcome.js";
import type { BenchmarkQuestion } from "./benchmark.js";
import { judgeAnswer, type Judge } from "./judges.js";
import { retrievalDiagnostics, type RetrievalDiagnostics } from "./retrievalDiagnostics.js";
import { formatDuration } from "../ingestBenchmark.js";

/** A run stops after this many Asks in a row failed: something is wrong with the setup, not one question. */
export const MAX_CONSECUTIVE_FAILURES = 5;

export type AskFunction = (request: AskRequest, onEvent: (e: AskEvent) => void, signal: AbortSignal) => Promise<void>;

export interface AnswersRunOptions {
  readonly questions: readonly BenchmarkQuestion[];
  readonly methods: readonly AnswerMethod[];
  /** The Ask of one method for one question (the caller's flags, then requestFor). */
  readonly request: (method: AnswerMethod, question: BenchmarkQuestion, requestId: string) => AskRequest;
  readonly ask: AskFunction;
  /** Embeds answers and gold answers for the cosine score. */
  readonly embedder: Embedder;
  readonly judge: Judge | undefined;
  /** The output folder: rows.jsonl is appended to, errors.jsonl gets the failed Asks. */
  readonly out: string;
  /** Rows already in rows.jsonl (a resumed run); new rows are pushed onto it. */
  readonly previous: AnswerRow[];
  /** Embedded: the store the Asks ran on, for the retrieval diagnostics. */
  readonly store?: ChunkStore | undefined;
  readonly corpusPath: string;
  /** The message of a failed Ask, as the caller words pipeline errors. */
  readonly describeError: (err: unknown) => string;
  readonly notes: string[];
  readonly log: (line: string) => void;
  readonly signal: AbortSignal;
}

/** Answers every question × method not yet in `previous`; the diagnostics when embedded. */
export async function answerQuestions(o: AnswersRunOptions): Promise<{ failures: number; diagnostics: RetrievalDiagnostics | undefined }> {
  const rowsPath = join(o.out, "rows.jsonl");
  const errorsPath = join(o.out, "errors.jsonl");
  const done = new Set(o.previous.map((r) => rowKey(r.question_id, r.method)));
  const writer = new RowWriter(rowsPath);
  const bar = progressBar("eval answers");
  let failures = 0;
  let consecutive = 0;
  let diagnostics: RetrievalDiagnostics | undefined;
  try {
    const total = o.questions.length * o.methods.length;
    const todo = o.questions.flatMap((q, qi) => o.methods.map((m, mi) => ({ q, qi, m, mi }))).filter(({ q, m }) => !done.has(rowKey(q.id, m.name)));
    if (done.size > 0) o.log(`eval: resuming: ${total - todo.length} of ${total} rows already in ${rowsPath}`);
    const goldVectors = new Map<string, Float32Array>();
    const loopStart = performance.now();
    let finished = 0;
    for (const { q, qi, m, mi } of todo) {
      if (o.signal.aborted) break;
      const events: AskEvent[] = [];
      const t0 = performance.now();
      try {
        await o.ask(o.request(m, q, `eval-q${qi}-m${mi}`), (e) => events.push(e), o.signal);
        const outcome = askOutcome(events);
        const harnessMs = performance.now() - t0;
        // The gold answer is the same for every method: embed it once per question.
        let referenceVector = goldVectors.get(q.id);
        if (referenceVector === undefined) {
          referenceVector = (await o.embedder.embed([q.answer]))[0]!;
          goldVectors.set(q.id, referenceVector);
        }
        const [answerVector] = await o.embedder.embed([outcome.answer.trim() === "" ? " " : outcome.answer]);
        const verdict = o.judge !== undefined ? await judgeAnswer(o.judge, q.question, q.answer, outcome.answer, o.signal) : undefined;
        const row: AnswerRow = {
          question_id: q.id,
          method: m.name,
          answer: outcome.answer,
          context_ids: outcome.contextIds,
          metrics: scoreAnswer(outcome.answer, q.answer, { answer: answerVector!, reference: referenceVector }),
          timings: { ...outcome.timings, harness_ms: Math.round(harnessMs * 10) / 10 },
          ...(outcome.warnings.length > 0 ? { warnings: outcome.warnings } : {}),
          ...(verdict !== undefined ? { judge: verdict } : {}),
        };
        writer.append(row);
        o.previous.push(row);
        consecutive = 0;
      } catch (err) {
        if (o.signal.aborted) break;
        if (err instanceof InputError && err.exitCode === 2 && err.message.startsWith("judge ")) throw err;
        const message = o.describeError(err);
        failures++;
        consecutive++;
        writeFileSync(errorsPath, `${JSON.stringify({ question_id: q.id, method: m.name, error: message })}\n`, { flag: "a" });
        o.log(`eval: question ${q.id}, ${m.name}: ${message} (recorded in ${errorsPath}; continuing)`);
        if (consecutive >= MAX_CONSECUTIVE_FAILURES) {
          throw new InputError(`${MAX_CONSECUTIVE_FAILURES} Asks in a row failed, the last with: ${message}; fix the setup and continue with --resume`, 1);
        }
      }
      finished++;
      const elapsed = performance.now() - loopStart;
      const eta = (elapsed / finished) * (todo.length - finished);
      bar.update(total - todo.length + finished, total, `rows · ${q.id} ${m.name} · ETA ${formatDuration(eta)}`);
    }
    bar.done();
    if (o.signal.aborted) throw new InputError(`interrupted; ${o.previous.length} rows are in ${rowsPath}: continue with --resume`, 130);
    if (o.store !== undefined) {
      try {
        diagnostics = await retrievalDiagnostics(o.store, o.embedder, o.questions, o.corpusPath);
        if (diagnostics === undefined) o.notes.push("No question has gold documents in the store: no retrieval diagnostics.");
      } catch (err) {
        // The rows are the expensive part: a diagnostics failure must not cost the summary.
        const message = (storeErrorAsInput(err) as Error).message;
        o.notes.push(`Retrieval diagnostics failed: ${message}`);
        o.log(`eval: retrieval diagnostics failed (${message}); the summary is written without them`);
      }
    }
  } finally {
    writer.close();
  }
  return { failures, diagnostics };
}

export interface AnswersSummaryOptions {
  readonly benchmark: string;
  readonly questions: readonly BenchmarkQuestion[];
  readonly methods: readonly AnswerMethod[];
  readonly rows: readonly AnswerRow[];
  readonly out: string;
  readonly seed: number;
  readonly failures: number;
  readonly diagnostics: RetrievalDiagnostics | undefined;
  readonly notes: string[];
  readonly target: string;
  readonly judge: Judge | undefined;
  readonly wallMs: number;
  readonly run: BenchRun;
  /** Also write the HTML report here. */
  readonly report?: string | undefined;
  readonly log: (line: string) => void;
}

/** Summarises the rows of this run's questions into summary.json (and the HTML report); returns what it wrote. */
export function writeAnswersSummary(o: AnswersSummaryOptions) {
  const rowsPath = join(o.out, "rows.jsonl");
  const errorsPath = join(o.out, "errors.jsonl");
  const wanted = new Set(o.questions.map((q) => q.id));
  const rows = o.rows.filter((r) => wanted.has(r.question_id));
  if (rows.length === 0) throw new InputError(`no rows to summarise in ${rowsPath}: every Ask failed (see ${errorsPath})`, 1);
  const summary = summarizeAnswers(rows, o.methods.map((m) => m.name), o.seed);
  const short = o.methods.filter((m) => (summary.methods[m.name]?.questions ?? 0) < o.questions.length).map((m) => `${m.name} (${summary.methods[m.name]?.questions ?? 0} of ${o.questions.length})`);
  if (short.length > 0) {
    const line = `Not every question has a row for: ${short.join(", ")}; the failed Asks are in ${errorsPath}. Means are over the rows present; wins only over questions every method answered.`;
    o.notes.push(line);
    o.log(`eval: warning: ${line}`);
  }
  const report = {
    benchmark: resolve(o.benchmark),
    questions: o.questions.length,
    rows: rows.length,
    failed_asks_this_run: o.failures,
    notes: o.notes,
    target: o.target,
    judge: o.judge?.id ?? null,
    wall_ms_this_run: Math.round(o.wallMs),
    asks_ms_total: Math.round(rows.reduce((s, r) => s + (r.timings["harness_ms"] ?? 0), 0)),
    ...summary,
    ...(o.diagnostics !== undefined ? { retrieval_diagnostics: o.diagnostics } : {}),
    run: o.run,
  };
  writeFileSync(join(o.out, "summary.json"), `${JSON.stringify(report, null, 2)}\n`);
  if (o.report !== undefined) {
    const facts: Record<string, string> = {
      benchmark: `${report.benchmark} (${o.questions.length} questions)`,
      answers: o.target,
      judge: o.judge?.id ?? "none",
      methods: o.methods.map((m) => m.name).join(", "),
      rows: String(rows.length),
      "wall time (this run)": formatDuration(o.wallMs),
      code: `${o.run.commit ?? "unknown commit"}${o.run.dirty ? " + uncommitted changes" : ""}`,
    };
    try {
      writeFileSync(o.report, renderAnswersReport({ summary, ...(o.diagnostics !== undefined ? { diagnostics: o.diagnostics } : {}), facts, notes: o.notes }));
    } catch (err) {
      throw new InputError(`--report: cannot write ${o.report}: ${(err as Error).message}`, 1, { cause: err });
    }
    o.log(`eval: report written to ${o.report}`);
  }
  o.log(`eval: ${rows.length} rows in ${rowsPath}; summary in ${join(o.out, "summary.json")}; ${formatDuration(o.wallMs)}${o.failures > 0 ? `; ${o.failures} Asks failed (${errorsPath})` : ""}`);
  return { report, summary };
}
