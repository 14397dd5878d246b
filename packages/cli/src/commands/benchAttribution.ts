import type { Command } from "commander";
import { MAX_SAMPLES } from "@attr-rag/core";
import { CliError } from "../cliError.js";
import { positiveInt } from "../parseArgs.js";
import { progressBar } from "@attr-rag/telemetry";
import { defaultCorpus } from "../defaultCorpus.js";
import { describeRun, readBenchCorpus, runAttributionBench } from "@attr-rag/bench";
import { loadModelArg } from "@attr-rag/engine";

interface BenchAttributionFlags {
  model: string;
  sets: string;
  setTokens: string;
  samples: string;
  maxTokens: string;
  seed: string;
  corpus?: string;
  sequences: string;
  threads?: string;
  json?: boolean;
}

/** `attr-rag bench attribution`: Kernel SHAP's coalitions scored in shared batches against one at a time. */
export function registerBenchAttributionCommand(bench: Command): void {
  bench
    .command("attribution")
    .summary("coalition scoring: trie-shared batches vs one coalition at a time (Kernel SHAP's coalitions)")
    .description(
      [
        "Builds a prompt of --sets context sets of about --set-tokens tokens cut from a corpus, generates A_full,",
        "then scores the coalitions a --samples Kernel SHAP asks for by teacher forcing twice: batched (trie order,",
        "shared prefixes, as Attribute runs them) and each coalition alone as its own prompt. Reports both times, the",
        "tokens each evaluated, the largest difference of v(C) and the multiply-add bound of the layout. f32 KV cache.",
      ].join("\n"),
    )
    .requiredOption("--model <path|name>", "GGUF model to run: a path or a model-cache name")
    .option("--sets <n>", "number of context sets", "10")
    .option("--set-tokens <n>", "tokens per context set", "150")
    .option("--samples <n>", "Kernel SHAP coalition budget", "64")
    .option("--max-tokens <n>", "tokens of A_full (each scored for every coalition)", "64")
    .option("--seed <n>", "Kernel SHAP's seed", "0")
    .option("--corpus <file>", "corpus.jsonl or a text file to cut sets from (default: the demo corpus)")
    .option("--sequences <n>", "parallel sequences of the batched run", "16")
    .option("--threads <n>", "CPU threads (default: all)")
    .option("--json", "print the report as one JSON line")
    .action(async (o: BenchAttributionFlags) => {
      const run = describeRun();
      const sets = positiveInt("--sets", o.sets);
      const setTokens = positiveInt("--set-tokens", o.setTokens);
      const samples = positiveInt("--samples", o.samples);
      if (samples > MAX_SAMPLES) throw new CliError(`--samples must be at most ${MAX_SAMPLES}, got ${samples}`);
      const maxTokens = positiveInt("--max-tokens", o.maxTokens);
      const sequences = positiveInt("--sequences", o.sequences);
      if (sequences < 2 || sequences > 256) throw new CliError(`--sequences must be 2..256, got ${sequences}`);
      const seed = Number(o.seed);
      if (!Number.isInteger(seed) || seed < 0) throw new CliError(`--seed must be an integer ≥ 0, got "${o.seed}"`);
      const corpus = await readBenchCorpus(o.corpus ?? defaultCorpus());
      const model = await loadModelArg(o.model);
      try {
        // One stream per sequence, each holding the whole prompt and the answer.
        const perSequence = 2 ** Math.ceil(Math.log2(sets * (setTokens + 16) + 400 + maxTokens));
        const ctx = await model.createContext({
          contextSize: sequences * perSequence,
          sequences,
          kvType: "f32",
          ...(o.threads ? { threads: positiveInt("--threads", o.threads) } : {}),
        });
        const bar = progressBar("bench attribution");
        const report = await runAttributionBench(ctx, { sets, setTokens, samples, maxTokens, seed, corpus, onProgress: (d, t, l) => bar.update(d, t, l) });
        bar.done();
        if (o.json) {
          process.stdout.write(`${JSON.stringify({ ...report, model: o.model, run })}\n`);
          return;
        }
        console.log(`model ${o.model}: ${report.n_sets} sets, ${report.prompt_tokens} prompt tokens, ${report.answer_tokens} answer tokens, ${report.coalitions} coalitions`);
        console.log(`batched:    ${report.batched.wall_ms.toFixed(0)} ms, ${report.batched.tokens_evaluated} tokens evaluated (${report.batched.tokens_reused} reused)`);
        console.log(`one by one: ${report.one_by_one.wall_ms.toFixed(0)} ms, ${report.one_by_one.tokens_evaluated} tokens evaluated`);
        console.log(`speed-up ${report.speedup.toFixed(2)}× (multiply-add bound ${report.multiply_add_bound.toFixed(2)}×); largest |Δv| ${report.max_abs_diff.toExponential(2)} nats`);
      } finally {
        await model.dispose();
      }
    });
}
