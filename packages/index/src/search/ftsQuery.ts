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
  const phrases = ftsPhrases(query);
  return phrases.length === 0 ? undefined : phrasesMatch(phrases);
}

/** The phrases toFtsMatch ORs together, in order: the text's distinct word runs, lower-cased. */
export function ftsPhrases(query: string): string[] {
  const terms = new Set<string>();
  for (const match of query.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) terms.add(match[0].toLowerCase());
  return [...terms];
}

/** An FTS5 MATCH expression that ORs the given phrases, each quoted. */
export function phrasesMatch(phrases: readonly string[]): string {
  return phrases.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}
