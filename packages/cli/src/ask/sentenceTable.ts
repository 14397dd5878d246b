import type { SentenceAttributions } from "@attr-rag/contracts";

const MAX_COLUMNS = 8;
const TEXT_WIDTH = 44;

/**
 * A compact sentence × set table: per sentence, how much leaving each set out lowers its log-probability
 * (nats; * above the threshold: the set supports it), how much likelier all of the context made it than none,
 * and what it cites, or that no set supports it.
 */
export function sentenceTable(text: string, attribution: SentenceAttributions, title: string): string {
  const sets = attribution.setIds.slice(0, MAX_COLUMNS);
  const more = attribution.setIds.length - sets.length;
  const width = Math.max(6, ...sets.map((s) => s.length + 1));
  const lines = [
    `${title} (nats lost when a set is left out; * above ${attribution.threshold}; "vs none": all sets against no context):`,
    `  ${"#".padStart(2)}  ${"sentence".padEnd(TEXT_WIDTH)} ${sets.map((s) => s.padStart(width)).join(" ")}${more > 0 ? `  +${more} sets` : ""} ${"vs none".padStart(8)}  supported by`,
  ];
  attribution.sentences.forEach((s, i) => {
    const cells = sets.map((_, j) => {
      const d = s.drops[j] ?? 0;
      return `${d.toFixed(2)}${s.topSets.includes(j) ? "*" : " "}`.padStart(width);
    });
    const support = s.supported ? s.topSets.map((j) => attribution.setIds[j]).join(" ") : "unsupported by the retrieved passages";
    lines.push(
      `  ${String(i + 1).padStart(2)}  ${quote(text.slice(s.start, s.end)).padEnd(TEXT_WIDTH)} ${cells.join(" ")}${more > 0 ? " ".repeat(`  +${more} sets`.length) : ""} ${(s.logProbFull - s.logProbNoContext).toFixed(2).padStart(8)}  ${support}`,
    );
  });
  return `${lines.join("\n")}\n`;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ");
  return flat.length + 2 <= TEXT_WIDTH ? `"${flat}"` : `"${flat.slice(0, TEXT_WIDTH - 3)}…"`;
}
