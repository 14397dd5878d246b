import type { Command } from "commander";
import { corpusBleu, jaccardSimilarity, parseJsonLines, rougeScores, sentenceBleu, stringField, type RougeScores } from "@attr-rag/core";
import { CliError } from "../cliError.js";
import { readStdin } from "../readStdin.js";

interface MetricsOptions {
  corpus?: boolean;
}

type PRF = { p: number; r: number; f: number };

function prf(scores: RougeScores): Record<"rouge1" | "rouge2" | "rougeL" | "rougeLsum", PRF> {
  const pick = (s: { precision: number; recall: number; fmeasure: number }) => ({ p: s.precision, r: s.recall, f: s.fmeasure });
  return { rouge1: pick(scores.rouge1), rouge2: pick(scores.rouge2), rougeL: pick(scores.rougeL), rougeLsum: pick(scores.rougeLsum) };
}

/**
 * Scores `{"reference","candidate"}` JSON lines. Validates every line first, so bad input produces an error
 * naming the line and no partial output. Returns the output lines.
 */
export function scoreMetricLines(input: string, options: MetricsOptions = {}): string[] {
  const pairs = parseJsonLines(input).map((entry) => ({
    reference: stringField(entry, "reference"),
    candidate: stringField(entry, "candidate"),
  }));
  const out = pairs.map(({ reference, candidate }) =>
    JSON.stringify({
      rouge: prf(rougeScores(reference, candidate)),
      rouge_stem: prf(rougeScores(reference, candidate, { stemmer: true })),
      jaccard: jaccardSimilarity(reference, candidate),
      bleu_sentence: sentenceBleu(candidate, reference).score,
    }),
  );
  if (options.corpus) {
    if (pairs.length === 0) throw new CliError("--corpus needs at least one input line; corpus BLEU of nothing is undefined");
    out.push(JSON.stringify({ bleu_corpus: corpusBleu(pairs.map((p) => p.candidate), [pairs.map((p) => p.reference)]).score }));
  }
  return out;
}

export function registerMetricsCommand(program: Command): void {
  program
    .command("metrics")
    .summary("score candidate texts against references (ROUGE, Jaccard, BLEU)")
    .description(
      [
        "Reads JSON lines {\"reference\": str, \"candidate\": str} on stdin and writes one JSON line per input:",
        '  {"rouge": {"rouge1": {"p","r","f"}, "rouge2", "rougeL", "rougeLsum"}, "rouge_stem": {…with the Porter stemmer},',
        '   "jaccard": x, "bleu_sentence": x}',
        "ROUGE equals Google's rouge-score (rougeLsum splits sentences on newlines); Jaccard is over the sets of ROUGE",
        "tokens; BLEU equals sacrebleu (13a tokenizer, exp smoothing; sentence BLEU uses effective order) on sacrebleu's",
        "0-100 scale. Blank lines are skipped. Bad JSON or a missing field: an error naming the line, exit code 2, and",
        "nothing on stdout.",
      ].join("\n"),
    )
    .option("--corpus", "also write a last line {\"bleu_corpus\": x} over all inputs (candidates as hypotheses, references as one stream)")
    .action(async (options: MetricsOptions) => {
      const lines = scoreMetricLines(await readStdin(), options);
      process.stdout.write(lines.map((l) => `${l}\n`).join(""));
    });
}
