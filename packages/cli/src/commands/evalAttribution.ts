import type { Command } from "commander";
import { describeRun } from "@attr-rag/bench";
import { InputError, MAX_SAMPLES, positiveInt } from "@attr-rag/core";
import { defaultModelPath } from "@attr-rag/engine";
import { attributionEvalText, RELATIONSHIP_KINDS, runAttributionEval, type RelationshipKind } from "@attr-rag/eval";

interface EvalAttributionFlags {
  sets: string;
  kind: string;
  seed: string;
  samples: string;
  negatives: string;
  kMax: string;
  model?: string;
  threads?: string;
  json?: boolean;
}

/** `attr-rag eval attribution`: RQ1 (rank agreement with exact Shapley) and RQ2 (precision@k) per method. */
export function registerEvalAttributionCommand(evalCmd: Command): void {
  evalCmd
    .command("attribution")
    .summary("coalition methods against exact Shapley on synthetic redundancy / complementarity / synergy sets")
    .description(
      [
        "Generates --sets examples of --kind (two positive passages related that way, --negatives negatives, a target",
        "answer; see packages/eval/src/relationshipSets.ts), scores v(C) = log P(answer | question, C) for all",
        "2^n coalitions of each with the model (one batched pass per example), then runs every method on those values:",
        "RQ1 = Spearman and Kendall of each method's scores against exact Shapley's; RQ2 = precision@k of its top k",
        "against the k sets whose removal drops v the most (exhaustive); utility calls per method; positives_top2 =",
        "how often both positive passages are the method's top two. Progress goes to stderr. With --json, one line.",
      ].join("\n"),
    )
    .option("--sets <n>", "examples to generate", "12")
    .option("--kind <kind>", `${RELATIONSHIP_KINDS.join(" | ")} | mixed`, "mixed")
    .option("--seed <n>", "seed of the generator and of the sampling methods", "0")
    .option("--samples <n>", "budget of the sampling methods", "32")
    .option("--negatives <n>", "negative passages per example (1-4)", "4")
    .option("--k-max <n>", "largest k of precision@k", "3")
    .option("--model <path|name>", "GGUF model (default: $ATTR_RAG_MODEL or the shipped stories260K)")
    .option("--threads <n>", "CPU threads (default: all)")
    .option("--json", "print the report as one JSON line")
    .action(async (o: EvalAttributionFlags) => {
      const run = describeRun();
      const count = positiveInt("--sets", o.sets);
      if (count > 10_000) throw new InputError(`--sets must be at most 10000, got ${count}`);
      const kind = o.kind as RelationshipKind | "mixed";
      if (kind !== "mixed" && !RELATIONSHIP_KINDS.includes(kind)) throw new InputError(`--kind must be one of ${RELATIONSHIP_KINDS.join(", ")}, mixed; got "${o.kind}"`);
      const seed = Number(o.seed);
      if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new InputError(`--seed must be an integer in [0, 4294967295], got "${o.seed}"`);
      const samples = positiveInt("--samples", o.samples);
      if (samples > MAX_SAMPLES) throw new InputError(`--samples must be at most ${MAX_SAMPLES}, got ${samples}`);
      const negatives = positiveInt("--negatives", o.negatives);
      if (negatives > 4) throw new InputError(`--negatives must be 1..4, got ${negatives}`);
      const kMax = positiveInt("--k-max", o.kMax);
      const threads = o.threads ? positiveInt("--threads", o.threads) : undefined;
      const report = await runAttributionEval({ modelArg: o.model ?? defaultModelPath(), kind, count, seed, samples, negatives, kMax, threads, run });
      process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : `${attributionEvalText(report).join("\n")}\n`);
    });
}
