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
import { rssQuarters } from "@attr-rag/core";

const [reportPath, prefix] = process.argv.slice(2);
if (reportPath === undefined || prefix === undefined) {
  process.stderr.write("usage: node packages/bench/scripts/soak-record.mjs REPORT.json bench/results/NAME\n");
  process.exit(2);
}
const report = JSON.parse(readFileSync(reportPath, "utf8"));
const { history, ...rest } = report;
if (history === undefined) throw new Error(`${reportPath} has no history: write it with \`attr-rag soak --json\``);

const mib = (bytes) => Math.round(bytes / 2 ** 20);
// Each process's resident memory as the checker's rss-bounded rule reads it.
const rss = Object.fromEntries(
  [...rssQuarters(history.rss)].sort((a, b) => a[0].localeCompare(b[0])).map(([name, q]) => [name, { samples: q.samples, first_quarter_mib: mib(q.early), last_quarter_mib: mib(q.late) }]),
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
