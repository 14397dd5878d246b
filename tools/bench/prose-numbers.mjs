// Numbers in the prose of README.md and docs/*.md that read as measurements must be ones a reader can check:
// written the same way in a generated block of the same document, i.e. rendered from a bench/results/ run
// (tools/bench/readme-tables.mjs). Prose that quotes a number from memory drifts from the runs (it did: "12.2 s"
// beside a JSON saying 12.11). A number that is a setting, not a measurement, is declared with the source
// line that sets it (packages/cli/test/proseNumbers.test.ts), so the two cannot drift either.
//
// What counts as a measurement-like number: one with a decimal point or thousands separators, one followed by
// a unit (× % s ms µs min and sizes), or one marked approximate (~ ≈). Plain small integers (10 sets, k = 8)
// are settings and counts a reader sets, not results. Not prose: generated blocks, fenced code, `inline code`,
// link targets and HTML comments; numbers inside names (qwen2-0.5b, k8s, v1.5) and versions (3.22.1).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { docFiles, REPO_ROOT } from "./readme-tables.mjs";

const UNIT = String.raw`×|%|ms|µs|s|min|h|GiB|MiB|KiB|GB|MB|kB|G|M|k`;
const NUMBER = new RegExp(String.raw`(~|≈)?(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)(?:[ \u00a0]?(${UNIT})(?![\p{L}\d]))?`, "gu");

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
  proseLines.forEach((text, i) => {
    for (const m of text.matchAll(NUMBER)) {
      const before = text.slice(0, m.index);
      const after = text.slice(m.index + m[0].length);
      // Part of a name or a version: qwen2-0.5b, bge-…-v1.5, k8s, 3.22.1, 2026-11-22, 152k-vocabulary, H100.
      if (/[\p{L}\d_@/.:-]$/u.test(before) && !m[1]) continue;
      if (/^[\p{L}\d_]/u.test(after) || /^[.:/-]\d/.test(after) || /^-[\p{L}\d]/u.test(after)) continue;
      const [raw, approx, num, unit] = m;
      const measured = approx !== undefined || unit !== undefined || /[.,]/.test(num);
      if (!measured) continue;
      found.push({ line: i + 1, raw: raw.trim(), digits: num.replace(/,/g, ""), unit: unit ?? "", approx: approx !== undefined });
    }
  });
  return found;
}

/** Whether the number is written the same way (approximation mark aside) in the generated text. */
export function traceable(n, generatedText) {
  const escaped = n.raw.replace(/^[~≈]/, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/ /g, "[ \u00a0]?");
  return new RegExp(String.raw`(?<![\d.,])${escaped}(?![\d])`, "u").test(generatedText);
}

/**
 * Every measurement-like prose number in README.md and docs/*.md that is neither in a generated block of its
 * document nor declared in `settings` ({ file, says: a phrase of the line holding the number }), and the
 * settings no line uses any more.
 */
export function untracedNumbers(settings, docs = docFiles().map((file) => ({ file, text: readFileSync(join(REPO_ROOT, file), "utf8") }))) {
  const split = docs.map((d) => ({ ...d, ...splitProse(d.text) }));
  const missing = [];
  const usedSettings = new Set();
  for (const d of split) {
    for (const n of measuredNumbers(d.prose)) {
      const line = d.prose[n.line - 1];
      const setting = settings.find((s) => s.file === d.file && line.includes(s.says) && s.says.includes(n.raw.replace(/^[~≈]/, "")));
      if (setting) {
        usedSettings.add(setting);
        continue;
      }
      if (!traceable(n, d.generated)) missing.push({ file: d.file, line: n.line, number: n.raw, text: line.trim() });
    }
  }
  return { missing, unusedSettings: settings.filter((s) => !usedSettings.has(s)) };
}
