// Python string semantics that the reference implementations rely on and JavaScript does
// not share. sacrebleu splits and strips with Python's str.split()/str.rstrip(), whose
// whitespace set differs from JavaScript's \s: Python also treats U+001C..U+001F and U+0085
// as whitespace, and does NOT treat U+FEFF (BOM) as whitespace. Checked against
// CPython 3.11 `str.isspace()` over every code point (see test/metrics/pythonText.test.ts).

const WS = "\\t\\n\\x0B\\f\\r\\x1C-\\x1F \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

const WHITESPACE_RUN = new RegExp(`[${WS}]+`);
const TRAILING_WHITESPACE = new RegExp(`[${WS}]+$`);
const SINGLE_WHITESPACE = new RegExp(`^[${WS}]$`);

/** Python's `str.isspace()` for a single character. */
export function isPythonWhitespace(char: string): boolean {
  return SINGLE_WHITESPACE.test(char);
}

/** Python's `s.split()` (no argument): split on whitespace runs, drop empty pieces. */
export function pythonSplit(text: string): string[] {
  return text.split(WHITESPACE_RUN).filter((piece) => piece !== "");
}

/** Python's `s.rstrip()` (no argument). */
export function pythonRstrip(text: string): string {
  return text.replace(TRAILING_WHITESPACE, "");
}

/** Python's `len(s)`: the number of code points (a lone surrogate counts as one, as in Python). */
export function codePointLength(text: string): number {
  let length = 0;
  for (const _ of text) length++;
  return length;
}
