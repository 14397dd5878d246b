import { CliError } from "./cliError.js";

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

/** Parses --quantization (the vector element type a new store is created with). */
export function parseQuantization(value: string | undefined): "f32" | "f16" | undefined {
  if (value === undefined) return undefined;
  if (value === "f32" || value === "f16") return value;
  throw new CliError(`--quantization must be f32 or f16, got "${value}"`);
}
