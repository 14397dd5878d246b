#!/usr/bin/env node
// Splits one `attr-rag soak --json` report into what bench/results/ keeps: the report with a summary in place
// of the history (docs/operations.md renders it), and the whole history gzipped beside it, which
// packages/bench/test/soakRecord.test.ts checks again with the checker of the day:
//
//   node packages/bench/scripts/soak-record.mjs REPORT.json bench/results/soak-60min
//
// writes bench/results/soak-60min.json and bench/results/soak-60min-history.json.gz. An hour's history is
// about 4 MB of JSON: too much to keep as text beside results of a few KB, too important to drop.
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";
import { gzipSync } from "node:zlib";

const [reportPath, prefix] = process.argv.slice(2);
if (reportPath === undefined || prefix === undefined) {
  process.stderr.write("usage: node packages/bench/scripts/soak-record.mjs REPORT.json bench/results/NAME\n");
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, "utf8"));
const { history, ...rest } = report;
if (history === undefined) throw new Error(`${reportPath} has no history: write it with \`attr-rag soak --json\``);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => Math.round(bytes / 2 ** 20);
// Each process's resident memory as the checker's rss-bounded rule reads it: the median of the first and of
// the last quarter of its samples after the first fifth (warm-up), restarts included.
const byProcess = new Map();
for (const s of [...history.rss].sort((a, b) => a.atMs - b.atMs)) byProcess.set(s.process, [...(byProcess.get(s.process) ?? []), s.bytes]);
const rss = Object.fromEntries(
  [...byProcess].sort((a, b) => a[0].localeCompare(b[0])).map(([name, samples]) => {
    const settled = samples.slice(Math.floor(samples.length / 5));
    const quarter = Math.max(1, Math.floor(settled.length / 4));
    return [name, { samples: samples.length, first_quarter_mib: mib(median(settled.slice(0, quarter))), last_quarter_mib: mib(median(settled.slice(-quarter))) }];
  }),
);
const batches = {};
for (const b of history.batches) batches[b.state] = (batches[b.state] ?? 0) + 1;
const summary = {
  batches,
  webhooks: { attempts: history.webhooks.length, accepted: history.webhooks.filter((w) => w.status >= 200 && w.status < 300).length },
  rss_mib: rss,
  history: `${basename(prefix)}-history.json.gz`,
};
writeFileSync(`${prefix}.json`, `${JSON.stringify({ ...rest, summary }, null, 2)}\n`);
writeFileSync(`${prefix}-history.json.gz`, gzipSync(JSON.stringify(history), { level: 9 }));
process.stderr.write(`soak-record: wrote ${prefix}.json and ${prefix}-history.json.gz\n`);
