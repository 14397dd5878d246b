// Numbers in the prose of README.md and docs/*.md that read as measurements must be ones a reader can check:
// written the same way in a generated block of the same document, i.e. rendered from a bench/results/ run
// (packages/bench/render/readme-tables.mjs). Prose that quotes a number from memory drifts from the runs (it did: "12.2 s"
// beside a JSON saying 12.11). A number that is a setting, not a measurement, is declared with the source
// line that sets it (packages/cli/test/proseNumbers.test.ts), so the two cannot drift either.
//
// What counts as a measurement-like number: one with a decimal point or thousands separators, one followed by
// a unit (× % s ms µs min and sizes), or one marked approximate (~ ≈). Plain small integers (10 sets, k = 8)
// are settings and counts a reader sets, not results. Not prose: generated blocks, fenced code, `inline code`,
// link targets and HTML comments; numbers inside names (qwen2-0.5b, k8s, v1.5) and versions (3.22.1).
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO_ROOT } from "./readme-tables.mjs";

const UNIT = String.raw`×|x|%|ms|µs|s|min|h|GiB|MiB|KiB|GB|MB|kB|G|M|k|seconds|minutes|percent|times`;
const NUM = String.raw`\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?(?:e[-+]?\d+)?`;
const NUMBER = new RegExp(String.raw`(~|≈)?(${NUM})(?:[ \u00a0]?(${UNIT})(?![\p{L}\d]))?`, "gu");
/** A range's upper end and unit, right after its lower end: "4–16 %", "1.5-2×". */
const RANGE_END = new RegExp(String.raw`^[–-](?:${NUM})(?:[ \u00a0]?(${UNIT})(?![\p{L}\d]))`, "u");

/** The document with everything that is not prose blanked out (line structure kept), and its generated blocks' text. */
export function splitProse(text) {
  const lines = text.split("\n");
  const prose = [];
  const generated = [];
  let inBlock = false;
  let inFence = false;
  let inCode = false;
  for (const line of lines) {
    if (/<!-- generated:[\w.-]+ -->/.test(line)) inBlock = true;
    if (inBlock) {
      generated.push(line);
      if (/<!-- \/generated:[\w.-]+ -->/.test(line)) inBlock = false;
      prose.push("");
      continue;
    }
    if (/^\s*(```|~~~)/.test(line)) {
      inFence = !inFence;
      prose.push("");
      continue;
    }
    if (inFence) {
      prose.push("");
      continue;
    }
    // Inline code may run over a line break inside a paragraph; a blank line ends it.
    if (line.trim() === "") inCode = false;
    let kept = "";
    for (const ch of line) {
      if (ch === "`") inCode = !inCode;
      kept += inCode || ch === "`" ? " " : ch;
    }
    prose.push(kept.replace(/<!--.*?-->/g, " ").replace(/\]\([^)]*\)/g, "] ").replace(/https?:\/\/\S+/g, " "));
  }
  return { prose, generated: generated.join("\n") };
}

/** Measurement-like numbers in prose lines: { line (1-based), raw, digits (no separators), unit, approx }. */
export function measuredNumbers(proseLines) {
  const found = [];
  proseLines.forEach((line, i) => {
    // Dates and emphasis marks are not numbers' neighbours: 2026-11-22, _1.5×_, **1.49×**.
    const text = line.replace(/\b\d{4}-\d{2}-\d{2}\b/g, (d) => " ".repeat(d.length)).replace(/[_*]/g, " ");
    for (const m of text.matchAll(NUMBER)) {
      const [raw, approx, num] = m;
      let unit = m[3];
      const before = text.slice(0, m.index);
      const after = text.slice(m.index + raw.length);
      // Part of a name or a version: qwen2-0.5b, bge-…-v1.5, k8s, 3.22.1, H100, node-llama-cpp@3.
      if (approx === undefined && (/[\p{L}\d@.]$/u.test(before) || /\p{L}[\p{L}\d]*-$/u.test(before))) continue;
      // A path or a ratio without a unit (a/b, 10:1) is not a quantity; "0.20/2.47×" still is, by its unit.
      if (approx === undefined && unit === undefined && /[/:]$/.test(before)) continue;
      if (/^[\p{L}\d]/u.test(after) || /^\.\d/.test(after) || /^-\p{L}/u.test(after)) continue;
      // The lower end of a range takes the range's unit.
      if (unit === undefined) unit = RANGE_END.exec(after)?.[1];
      const measured = approx !== undefined || unit !== undefined || /[.,e]/.test(num) || Number(num) >= 1000;
      if (!measured) continue;
      found.push({ line: i + 1, raw: unit !== undefined && m[3] === undefined ? `${num} ${unit}` : raw.trim(), written: num, digits: num.replace(/,/g, ""), unit: unit ?? "", approx: approx !== undefined });
    }
  });
  return found;
}

const SKIPPED_DIRS = new Set(["node_modules", "dist", "build", ".cache", ".reports", ".git", ".nx"]);

/** Every Markdown file of the repository (README.md, docs/, examples/, protos/, tools/ …), sorted. */
export function markdownFiles(dir = REPO_ROOT) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRS.has(entry.name) && !entry.name.startsWith(".")) out.push(...markdownFiles(join(dir, entry.name)));
    } else if (entry.name.endsWith(".md")) out.push(relative(REPO_ROOT, join(dir, entry.name)));
  }
  return out.sort();
}

/** Whether the number is written the same way (approximation mark aside) in the generated text. */
export function traceable(n, generatedText) {
  const escaped = n.raw.replace(/^[~≈]/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "[ \u00a0]?");
  return new RegExp(String.raw`(?<![\d.,])${escaped}(?![\d])`, "u").test(generatedText);
}

/**
 * Every measurement-like prose number in the repository's Markdown that is neither in a generated block of its
 * document nor declared in `settings` ({ file, says: a phrase of the line holding the number }), and the
 * settings no line uses any more.
 */
export function untracedNumbers(settings, docs = markdownFiles().map((file) => ({ file, text: readFileSync(join(REPO_ROOT, file), "utf8") }))) {
  const split = docs.map((d) => ({ ...d, ...splitProse(d.text) }));
  const missing = [];
  const usedSettings = new Set();
  for (const d of split) {
    for (const n of measuredNumbers(d.prose)) {
      const line = d.prose[n.line - 1];
      const setting = settings.find((s) => s.file === d.file && line.includes(s.says) && s.says.includes(n.written));
      if (setting) {
        usedSettings.add(setting);
        continue;
      }
      if (!traceable(n, d.generated)) missing.push({ file: d.file, line: n.line, number: n.raw, text: line.trim() });
    }
  }
  return { missing, unusedSettings: settings.filter((s) => !usedSettings.has(s)) };
}

/**
 * The declared settings whose evidence no longer holds: a `source` file that no longer matches its pattern, a
 * `check` whose computed text the phrase does not contain, or neither kind of evidence nor a reason (`why`).
 */
export function staleSettings(settings, read = (path) => readFileSync(join(REPO_ROOT, path), "utf8")) {
  const stale = [];
  for (const s of settings) {
    const evidence = [s.source, s.check, s.why].filter((x) => x !== undefined);
    if (evidence.length !== 1) stale.push({ ...s, problem: "needs exactly one of source, check or why" });
    else if (s.source && !s.source[1].test(read(s.source[0]))) stale.push({ ...s, problem: `${s.source[0]} no longer matches ${s.source[1]}` });
    else if (s.check && !s.says.includes(s.check())) stale.push({ ...s, problem: `the phrase does not contain "${s.check()}", which is what the check computes now` });
    else if (s.why !== undefined && s.why.length < 20) stale.push({ ...s, problem: "the reason is too short to say where the number comes from" });
  }
  return stale;
}
