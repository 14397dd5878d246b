// Argument checks shared by the metric functions. The metrics are called from untyped
// JavaScript and from JSON payloads too, so a wrong type must fail loudly here instead of
// turning into a silent 0 or NaN deep inside a score.

/** Short description of a value for error messages ("a number", "null", "an array"). */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" ? "an object" : `a ${type}`;
}

/** Throws a TypeError unless `value` is a string. `what` names the argument, e.g. "rougeScores(reference)". */
export function requireString(value: unknown, what: string): asserts value is string {
  if (typeof value !== "string") {
    throw new TypeError(
      `${what} must be a string, got ${describeValue(value)}. Pass the text itself (use "" for an empty text).`,
    );
  }
}

/** Throws a TypeError unless `value` is an array whose items are all strings. */
export function requireStringArray(value: unknown, what: string): asserts value is readonly string[] {
  if (!Array.isArray(value)) {
    throw new TypeError(`${what} must be an array of strings, got ${describeValue(value)}.`);
  }
  value.forEach((item, index) => requireString(item, `${what}[${index}]`));
}

/** Throws a RangeError unless `value` is an integer >= `min`. */
export function requireInteger(value: unknown, min: number, what: string): asserts value is number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min) {
    throw new RangeError(`${what} must be an integer >= ${min}, got ${String(value)}.`);
  }
}
