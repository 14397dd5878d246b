import type { Command } from "commander";
import { describeRun } from "@attr-rag/bench";
import {
  CHUNK_FETCH_FACTOR,
  EVAL_MODES,
  evaluateRetrieval,
  formatReport,
  formatTune,
  NDCG_K,
  parseKList,
  parseModes,
  TUNE_RECALL_K,
  type TuneResult,
} from "@attr-rag/eval";
import { parseQuantization } from "../parseArgs.js";
import { registerEvalAttributionCommand } from "./evalAttribution.js";
import { registerEvalAnswersCommand } from "./evalAnswers.js";
import { registerEvalOcclusionCommand } from "./evalOcclusion.js";

interface EvalOptions {
  corpus: string;
  questions: string;
  store?: string;
  k: string;
  mode: string;
  embedder: string;
  quantization?: string;
  json?: boolean;
  tune?: boolean;
}

export function registerEvalCommand(program: Command): void {
  const evalCmd = program.command("eval").summary("evaluate the pipeline on a benchmark (see: eval retrieval, eval attribution)");
  registerEvalAttributionCommand(evalCmd);
  registerEvalAnswersCommand(evalCmd);
  registerEvalOcclusionCommand(evalCmd);
  evalCmd
    .command("retrieval")
    .summary("doc-level Recall@k, MRR and nDCG@10 of dense, BM25 and hybrid search on a benchmark")
    .description(
      [
        "Ingests --corpus (SPEC section 5 corpus.jsonl) into --store (created when",
        "missing; unchanged documents are not re-embedded) or, without --store, into",
        "a temporary store that is removed afterwards. Then runs every question of",
        `--questions through each mode, fetching ${CHUNK_FETCH_FACTOR} × max(max k, ${NDCG_K}) chunks, maps the`,
        "chunk hits to their documents (a document counts once, at its first rank)",
        "and scores them against gold_doc_ids (binary relevance). Averages are over",
        "the questions with gold documents; the others (negative questions) are",
        "counted as skipped_no_gold. Timings go to stderr. With --json, one line:",
        "  {corpus (documents), questions, evaluated, skipped_no_gold,",
        '   modes: {<mode>: {recall: {"<k>": x}, mrr, "ndcg@10"}}}',
        "When hybrid runs, `fusion` says which fusion it used: {method, rrfK?,",
        'bm25Weight, from: "store" | "default"}.',
        "",
        "--tune (needs --store) first fits hybrid's fusion on these questions: for",
        "each question it fetches the BM25 and dense candidates once, then scores",
        "weighted RRF (BM25 weight 1..32 × k 10, 30, 60) and convex score fusion",
        "(λ 0, 0.05, ..., 1) offline, keeps the best mean nDCG@10 (ties: higher",
        `R@${TUNE_RECALL_K}, then the simpler fusion) and records it in the store, where ask,`,
        "search and serve use it by default from then on. It prints the best few",
        "with nDCG@10 before and after (in JSON: `tune`, with the whole grid). The",
        "scores that follow are on the questions it was fitted on, so optimistic:",
        "judge a tuned fusion on other questions.",
        "",
        "Bad input (a missing file, a bad JSON line, a question without",
        '"question", --tune without --store) exits 2.',
      ].join("\n"),
    )
    .requiredOption("--corpus <file>", "corpus.jsonl: {id, title, text, source, license} per line")
    .requiredOption("--questions <file>", "questions.jsonl: {id, question, gold_doc_ids, ...} per line")
    .option("--store <dir>", "store to (re)use for this corpus; default: a temporary one")
    .option("--k <list>", "doc-level cut-offs for Recall@k", "1,5,10,30")
    .option("--mode <mode>", `${EVAL_MODES.join(" | ")} | all`, "all")
    .option("--embedder <spec>", "use-lite | gguf:/path/to/model.gguf (must match --store's)", "use-lite")
    .option("--quantization <type>", "vector element type of a store this creates: f16 | f32 (default f16)")
    .option("--json", "print the report as one JSON line")
    .option("--tune", "fit hybrid's fusion on these questions and record it in --store for ask/search/serve")
    .action(async (o: EvalOptions) => {
      const run = describeRun(); // the commit and tree state of the code that was loaded, read before the work
      const ks = parseKList(o.k);
      const quantization = parseQuantization(o.quantization);
      const modes = parseModes(o.mode);
      const log = (line: string) => process.stderr.write(`${line}\n`);
      const onTune = (tune: TuneResult, questions: number, storePath: string) => {
        if (!o.json) process.stdout.write(formatTune(tune, questions, storePath));
      };
      const { report, tune, chunks } = await evaluateRetrieval({ corpus: o.corpus, questions: o.questions, store: o.store, ks, modes, embedder: o.embedder, quantization, tune: o.tune ?? false, log, onTune });
      process.stdout.write(o.json ? `${JSON.stringify({ ...report, ...(tune ? { tune } : {}), chunks, run })}\n` : formatReport(report, ks));
    });
}
