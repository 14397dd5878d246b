// The flags that shape one AskRequest (retrieval, generation, attribution, selection), declared once for every
// command that builds requests from them: ask, and batch submit/run (where they are the rows' defaults).
import type { Command } from "commander";
import { addStrategyOptions } from "./strategyOptions.js";

export function addAskRequestOptions(command: Command): Command {
  return addStrategyOptions(
    command
      .option("--baseline <kind>", "none | topk[:K] | rerank[:K] (the paper's Table I baselines)")
      .option("--k <n>", "chunks to retrieve (default 30)")
      .option("--mode <mode>", "retrieval: dense | bm25 | hybrid (default: the config's, hybrid)")
      .option("--max-tokens <n>", "max new tokens per answer (default 512)")
      .option("--method <m>", "attribution: occlusion (default) | leave-one-out | shapley | kernel-shap | tmc-shapley | beta-shapley | contextcite")
      .option("--samples <n>", "coalitions (kernel-shap, contextcite) or permutations (tmc-shapley, beta-shapley); default 64")
      .option("--seed <n>", "seed of the sampling methods (default 0)")
      .option("--beta-alpha <x>", "beta-shapley: α of the Beta(α, β) weights (default 16)")
      .option("--beta-beta <x>", "beta-shapley: β (default 1)")
      .option("--no-sentences", "skip sentence-level attribution (which set shaped which sentence; one teacher-forced pass of the answer per set)")
      .option("--sentence-threshold <nats>", "a set supports a sentence when leaving it out lowers the sentence's log-probability by more than this (default 1.0)")
      .option("--metrics <list>", "selection metrics, comma-separated: cosine, jaccard, rouge1, rouge2, rougeL, rougeLsum, loglik (default the six text metrics; loglik alone with a coalition method)")
      .option("--tau <x>", "selection: elbow threshold (default 0.05)")
      .option("--min-votes <n>", "selection: metrics needed to keep a set (default 3)")
      .option("--epsilon <x>", "selection: context-ignored threshold (default 0.01)")
      .option("--max-sets <n>", "selection: keep at most this many sets")
      .option("--max-gap <n>", "gap fill: kept chunks at most this many ordinals apart get the chunks in between (default 2)")
      .option("--include-occluded", "include each occluded answer's text in the events"),
  );
}
