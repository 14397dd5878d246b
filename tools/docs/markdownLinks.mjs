// Reading Markdown the way GitHub renders it, for the docs link check: headings (outside code fences) and
// their anchors (GitHub's slugs, with -1, -2 … for repeats), and every [text](target) link.

/** Lines outside ``` fences, with their 1-based numbers. */
export function proseLines(text) {
  const out = [];
  let fenced = false;
  text.split("\n").forEach((line, i) => {
    if (/^\s*```/.test(line)) {
      fenced = !fenced;
      return;
    }
    if (!fenced) out.push({ line, number: i + 1 });
  });
  return out;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading) {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]+>/g, "")
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor the file's headings make. */
export function anchors(text) {
  const seen = new Map();
  const out = new Set();
  for (const { line } of proseLines(text)) {
    const m = /^#{1,6}\s+(.+?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every inline link and image target outside code fences and inline code: { target, number }. */
export function links(text) {
  const out = [];
  for (const { line, number } of proseLines(text)) {
    const withoutCode = line.replace(/`[^`]*`/g, "");
    for (const m of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) out.push({ target: m[1], number });
  }
  return out;
}
