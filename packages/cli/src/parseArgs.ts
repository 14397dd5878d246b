// The option values only the command line parses; the common ones (positive integers, choices) are the core's.
import { CliError } from "./cliError.js";
import { parseShardSpec, type ShardSpec } from "@attr-rag/core";
import { MAX_INDEX_SHARDS } from "@attr-rag/contracts";

export { nonNegativeInt, oneOf, positiveInt, positiveNumber } from "@attr-rag/core";

/** Parses --quantization (the vector element type a new store is created with). */
export function parseQuantization(value: string | undefined): "f32" | "f16" | undefined {
  if (value === undefined) return undefined;
  if (value === "f32" || value === "f16") return value;
  throw new CliError(`--quantization must be f32 or f16, got "${value}"`);
}

/** `--shard i/S` (shard i of S, from 0), exit 2 with the reason when malformed. */
export function cliShardSpec(value: string): ShardSpec {
  try {
    return parseShardSpec(value, MAX_INDEX_SHARDS);
  } catch (err) {
    throw new CliError((err as Error).message, 2, { cause: err });
  }
}
