// The occlusion-engine flags, declared once for every command that runs the pipeline (ask, attribute, eval).
import type { Command } from "commander";

export function addStrategyOptions(command: Command): Command {
  return addApproximateOptions(
    command.option("--strategy <s>", "occlusion engine: naive | prefix-shared | speculative (exact), kv-reuse | kv-mask | screen (APPROXIMATE)"),
  );
}

/** The approximate strategies' knobs: recompute windows (kv-reuse, kv-mask, screen) and screening's choice. */
export function addApproximateOptions(command: Command): Command {
  return command
    .option("--recompute-gap <n>", "approximate strategies: tokens recomputed right after each occluded set (kv-mask on a unified KV cache)")
    .option("--recompute-tail <n>", "approximate strategies: prompt tokens recomputed at the end (default: the instruction and answer header)")
    .option("--screen-top-k <n>", "screen: regenerate the K sets whose absence lowers log P(A_full) most (default ⌈n/2⌉)")
    .option("--screen-threshold <nats>", "screen: regenerate the sets whose drop in log P(A_full) is at least this (instead of --screen-top-k)")
    .option("--screen-regenerate <s>", "screen: strategy regenerating the chosen sets: speculative (default, exact) | naive | prefix-shared | kv-reuse | kv-mask");
}
