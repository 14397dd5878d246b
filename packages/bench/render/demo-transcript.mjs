// The demo transcripts in README.md and docs/asking.md, rendered from a recorded demo run
// (bench/results/demo-*.json, written by packages/bench/scripts/demo-run.mjs): what the demo printed, never retyped.
import { describeRunRecord } from "./run-provenance.mjs";

/** Each stage line the demo prints, and the pipeline step it shows; every one must be in the record. */
const STAGES = [
  [/^retrieved \d+ chunks/, "1. retrieve: hybrid BM25 + dense, top k"],
  [/^aligned into \d+ chunk sets/, "2. consecutive chunks of one document → one set"],
  [/^re-ranked \d+ by /, "3. re-rank whole sets"],
  [/^generating the initial answer A_full/, "4. A_full from all the sets"],
  [/^occluded \d+\/\d+ sets/, "5. A_-j for every set, batched with a shared KV prefix"],
  [/^attributed \d+ sets/, "6. α_M(S_j) = 1 − sim_M(A_full, A_-j)"],
  [/^selected: /, "7. vote, elbow, keep"],
  [/^gap fill /, "7b. fill gaps inside each document (kept ordinals ≤ 2 apart)"],
];
const PROGRESS = /^\[(\d+(?:\.\d+)?)s\] (.*)$/;
const COLUMN = 48;

/** The progress lines in order, the occlusion counts folded into one line (first … last), each with its step. */
function stageLines(data, { width = Infinity } = {}) {
  const progress = data.stderr.map((l) => PROGRESS.exec(l)).filter((m) => m !== null);
  const out = [];
  for (const [pattern, step] of STAGES) {
    const hits = progress.filter((m) => pattern.test(m[2]));
    if (hits.length === 0) throw new Error(`the demo record has no progress line matching ${pattern}`);
    let text = hits.length === 1 ? hits[0][0] : `${hits[0][0]} … [${hits.at(-1)[1]}s] ${hits.at(-1)[2].replace(/ sets$/, "")}`;
    if (text.length > width) text = `${text.slice(0, width - 2).trimEnd()} …`;
    out.push(text.length <= COLUMN - 3 ? `${text.padEnd(COLUMN)}${step}` : `${text}    ${step}`);
  }
  return out;
}

/** stdout from the attribution table's title to the end (the table, the fallback warning, the Done line). */
function attributionLines(data) {
  const start = data.stdout.findIndex((l) => l.startsWith("Attribution ("));
  const done = data.stdout.findIndex((l) => l.startsWith("Done in "));
  if (start < 0 || done < start) throw new Error("the demo record has no attribution table and Done line on stdout");
  return data.stdout.slice(start, done + 1).filter((l) => l !== "");
}

function recorded(file, data, prefix) {
  return `Recorded by ${describeRunRecord(file, data)}: [${file}](${prefix}bench/results/${file}).`;
}

/** README: the stages, the answer elided, the table's first two rows, the Done line. */
export function demoShortBlock([{ file, data, prefix }]) {
  const table = attributionLines(data);
  const done = table.at(-1);
  const rows = table.slice(2).filter((l) => l.startsWith("  "));
  return [
    "```",
    ...stageLines(data, { width: 64 }),
    `${"Answer: …".padEnd(COLUMN)}8. the final answer from the kept sets, with citations`,
    ...sentenceLines(data, 2),
    table[0],
    table[1],
    ...rows.slice(0, 2).map((l) => (l.length > 140 ? `${l.slice(0, 138).trimEnd()} …` : l)),
    ...(rows.length > 2 ? ["  …"] : []),
    done,
    "```",
    "",
    recorded(file, data, prefix),
  ].join("\n");
}

/** docs/asking.md, first half: every stage line with its step. */
export function demoProgressBlock([{ data }]) {
  return ["```", ...stageLines(data), "```"].join("\n");
}

/** The sentence × set table the demo prints after the citations; with `rows`, its title, header and first rows. */
function sentenceLines(data, rows = Infinity) {
  const start = data.stdout.findIndex((l) => l.startsWith("Which context block shaped which sentence"));
  if (start < 0) throw new Error("the demo record has no sentence table on stdout");
  let end = start + 1;
  while (end < data.stdout.length && data.stdout[end] !== "") end++;
  const lines = data.stdout.slice(start, end);
  if (lines.length <= 2 + rows) return lines;
  return [...lines.slice(0, 2 + rows).map((l) => (l.length > 140 ? `${l.slice(0, 138).trimEnd()} …` : l)), "  …"];
}

/** docs/asking.md: which context block shaped which sentence, as printed. */
export function demoSentencesBlock([{ file, data, prefix }]) {
  return ["```", ...sentenceLines(data), "```", "", recorded(file, data, prefix)].join("\n");
}

/** docs/asking.md, second half: the whole attribution table, the warning and the Done line, as printed. */
export function demoResultBlock([{ file, data, prefix }]) {
  const lines = attributionLines(data);
  const done = lines.at(-1);
  return ["```", ...lines.slice(0, -1), "", done, "```", "", recorded(file, data, prefix)].join("\n");
}
