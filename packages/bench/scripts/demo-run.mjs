#!/usr/bin/env node
// Records one `attr-rag demo` run as the source of the demo transcripts in README.md and docs/asking.md:
//
//   node packages/bench/scripts/demo-run.mjs [--max-tokens 96] > bench/results/demo-stories260K.json
//
// It runs the demo exactly as `npm run demo` does (the repository's model, k 8, 96 answer tokens) on a fresh
// store in a temporary folder, and keeps every line the demo printed, stderr and stdout apart, with the run
// record (command, commit, machine). The temporary folder is written as `<store>` and the checkout as `.`,
// so the file does not depend on where it ran. Needs `npm run build` first.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { describeRun } from "@attr-rag/bench";

const { values } = parseArgs({ options: { "max-tokens": { type: "string", default: "96" } } });
const run = describeRun(process.argv, "node packages/bench/scripts/demo-run.mjs");
const root = resolve(import.meta.dirname, "../../..");
const dir = mkdtempSync(join(tmpdir(), "attr-rag-demo-run-"));
const store = join(dir, "store");
const args = ["demo", "--store", store, "--report", join(dir, "report.html"), "--max-tokens", values["max-tokens"]];

// The recorded run is the demo a stranger gets: the shipped model on the CPU, no ATTR_RAG_* setting (the
// check in packages/cli/test/demoRecord.test.ts runs it the same way).
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("ATTR_RAG_")));
process.stderr.write(`demo-run: attr-rag ${args.join(" ")}\n`);
const child = spawn(process.execPath, [join(root, "packages/cli/bin/attr-rag.js"), ...args], { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] });
const out = { stdout: "", stderr: "" };
child.stdout.on("data", (b) => (out.stdout += b));
child.stderr.on("data", (b) => {
  out.stderr += b;
  process.stderr.write(b);
});
const code = await new Promise((done) => child.on("close", done));
rmSync(dir, { recursive: true, force: true });
if (code !== 0) {
  process.stderr.write(`demo-run: the demo exited with ${code}; nothing recorded\n`);
  process.exit(1);
}
const lines = (text) =>
  text
    .split(store).join("<store>")
    .split(dir).join("<tmp>")
    .split(root).join(".")
    .replace(/\n$/, "")
    .split("\n");
process.stdout.write(
  `${JSON.stringify({ run, demo_args: ["--max-tokens", values["max-tokens"]], stderr: lines(out.stderr), stdout: lines(out.stdout) }, null, 2)}\n`,
);
