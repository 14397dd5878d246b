import { CliError } from "./cliError.js";
import { parseShardSpec, type ShardSpec } from "@attr-rag/core";
import { MAX_INDEX_SHARDS } from "@attr-rag/contracts";

/** Parses a positive integer option, naming the option in the error. */
export function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new CliError(`${name} must be a positive integer, got "${value}"`);
  return n;
}

/** Parses an integer option ≥ 0, naming the option in the error. */
export function nonNegativeInt(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new CliError(`${name} must be an integer ≥ 0, got "${value}"`);
  return n;
}

/** Parses a number > 0 (fractions allowed), naming the option in the error. */
export function positiveNumber(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new CliError(`${name} must be a number > 0, got "${value}"`);
  return n;
}

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

/** `value` when it is one of `choices`; a CliError naming the flag and the choices otherwise. */
export function oneOf<T extends string>(name: string, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new CliError(`${name} must be ${choices.join(", ").replace(/, ([^,]*)$/, " or $1")}, got "${value}"`);
}
