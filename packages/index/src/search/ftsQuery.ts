/**
 * Turns free text into a safe FTS5 MATCH expression: the word runs of the text, each as a double-quoted
 * string (a quoted string is a literal for FTS5, so `AND`, `NEAR`, `*`, `-`, `(`, `:` in user text are
 * just words or separators), joined with OR so any matching term retrieves a chunk and bm25() ranks by
 * how many and how rare. Returns undefined when the text has no word characters at all.
 *
 * Word runs are letters, digits and combining marks — what FTS5's unicode61 tokenizer keeps — so every
 * quoted string holds at least one token.
 */
export function toFtsMatch(query: string): string | undefined {
  const terms = new Set<string>();
  for (const match of query.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) terms.add(match[0].toLowerCase());
  if (terms.size === 0) return undefined;
  return [...terms].map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}
