// Reports are compared across runs and diffed, so numbers never go through locale-dependent formatting and
// never print "-0.000" for a value that rounds to zero.

const MISSING = "—";

/** Fixed decimals; "—" for a missing value, "NaN"/"∞"/"-∞" spelled out rather than hidden. */
export function formatFixed(value: number | undefined, digits: number): string {
  if (value === undefined) return MISSING;
  if (Number.isNaN(value)) return "NaN";
  if (!Number.isFinite(value)) return value > 0 ? "∞" : "-∞";
  const text = value.toFixed(digits);
  return /^-0(\.0*)?$/.test(text) ? text.slice(1) : text;
}

/** α as shown to people: three decimals, as in the paper's tables. */
export function formatAlpha(value: number | undefined): string {
  return formatFixed(value, 3);
}

/** Milliseconds with one decimal. */
export function formatMs(value: number | undefined): string {
  return value === undefined ? MISSING : `${formatFixed(value, 1)} ms`;
}

/** Counters are integers; no thousands separators so the text stays machine-readable. */
export function formatCount(value: number | undefined): string {
  if (value === undefined) return MISSING;
  return Number.isInteger(value) ? String(value) : formatFixed(value, 2);
}

/**
 * The exact value for data-* attributes: the shortest string that parses back to the same double, so a test or
 * a script reading the report gets the number the pipeline sent, not a rounded one.
 */
export function exactNumber(value: number): string {
  return Object.is(value, -0) ? "0" : String(value);
}
