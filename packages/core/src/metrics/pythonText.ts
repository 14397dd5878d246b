// Python string semantics that the reference implementations rely on and JavaScript does
// not share. sacrebleu splits and strips with Python's str.split()/str.rstrip(), whose
// whitespace set differs from JavaScript's \s: Python also treats U+001C..U+001F and U+0085
// as whitespace, and does NOT treat U+FEFF (BOM) as whitespace. Checked against
// CPython 3.11 `str.isspace()` over every code point (see test/metrics/pythonText.test.ts).

const WS = "\\t\\n\\x0B\\f\\r\\x1C-\\x1F \\x85\\xA0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000";

const WHITESPACE_RUN = new RegExp(`[${WS}]+`);
const SINGLE_WHITESPACE = new RegExp(`^[${WS}]$`);

/** Python's `str.isspace()` for a single character. */
export function isPythonWhitespace(char: string): boolean {
  return SINGLE_WHITESPACE.test(char);
}

/** Python's `s.split()` (no argument): split on whitespace runs, drop empty pieces. */
export function pythonSplit(text: string): string[] {
  return text.split(WHITESPACE_RUN).filter((piece) => piece !== "");
}

/** Python's `s.rstrip()` (no argument). A backwards scan, because a `[ws]+$` regex is
 * quadratic on texts with long whitespace runs in the middle. */
export function pythonRstrip(text: string): string {
  let end = text.length;
  while (end > 0 && isPythonWhitespace(text.charAt(end - 1))) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** Python's `len(s)`: the number of code points (a lone surrogate counts as one, as in Python). */
export function codePointLength(text: string): number {
  let length = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      length--; // a valid surrogate pair is one code point
      i++;
    }
  }
  return length;
}
