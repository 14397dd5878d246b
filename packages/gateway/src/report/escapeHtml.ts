// Every string that reaches the report comes from the pipeline (chunk text is arbitrary document content), so
// each one goes through here. Quotes are escaped too, so the same function is safe inside attribute values.
const REPLACEMENTS: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Text or attribute value → HTML that displays exactly that text. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => REPLACEMENTS[c] ?? c);
}
