// Option values as people type them (flags, settings): parsed, or an InputError naming the option and what it takes.
import { InputError } from "./inputError.js";

/** Parses a positive integer option, naming the option in the error. */
export function positiveInt(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) throw new InputError(`${name} must be a positive integer, got "${value}"`);
  return n;
}

/** Parses an integer option ≥ 0, naming the option in the error. */
export function nonNegativeInt(name: string, value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) throw new InputError(`${name} must be an integer ≥ 0, got "${value}"`);
  return n;
}

/** Parses a number > 0 (fractions allowed), naming the option in the error. */
export function positiveNumber(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n <= 0) throw new InputError(`${name} must be a number > 0, got "${value}"`);
  return n;
}

/** Parses a number ≥ 0 (fractions allowed), naming the option in the error. */
export function nonNegativeNumber(name: string, value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0) throw new InputError(`${name} must be a number ≥ 0, got "${value}"`);
  return n;
}

/** `value` when it is one of `choices`; a InputError naming the flag and the choices otherwise. */
export function oneOf<T extends string>(name: string, value: string, choices: readonly T[]): T {
  if ((choices as readonly string[]).includes(value)) return value as T;
  throw new InputError(`${name} must be ${choices.join(", ").replace(/, ([^,]*)$/, " or $1")}, got "${value}"`);
}
