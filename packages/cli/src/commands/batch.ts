import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { status } from "@grpc/grpc-js";
import { BatchState, isBatchId, type Batch } from "@attr-rag/contracts";
import { hasEnded } from "@attr-rag/batch";
import { addAskRequestOptions } from "../ask/askRequestOptions.js";
import { batchLine, finishedOf, progressDetail, stateName, webhookStateName } from "../batch/batchProgressText.js";
import { batchItemsFromJsonl, defaultsFromFlags } from "../batch/batchRows.js";
import { RESULTS_FORMATS, ResultsFile, type ResultsFormat } from "../batch/resultsFile.js";

const FORMAT_HELP = "results lines: rows (ours, docs/batches.md) or openai (the OpenAI Batch output shape)";

/** --format, checked. */
export function resultsFormat(value: unknown): ResultsFormat {
  const format = (value ?? "rows") as ResultsFormat;
  if (!RESULTS_FORMATS.includes(format)) throw new CliError(`--format must be ${RESULTS_FORMATS.join(" or ")}, got "${String(value)}"`);
  return format;
}
import { RUN_KEYS, runBatchEmbedded } from "../batch/runBatch.js";
import { CliError } from "../cliError.js";
import { addConfigOptions } from "../gatewayCli.js";
import { positiveInt } from "../parseArgs.js";
import { progressBar } from "@attr-rag/telemetry";
import { abortOnSigint } from "./ask.js";
import { RemoteBatches, type BatchServerOptions } from "@attr-rag/gateway";

interface ServerFlags {
  server?: string;
  token?: string;
  tlsCa?: string;
  json?: boolean;
}

function serverOf(o: ServerFlags): BatchServerOptions {
  if (o.server === undefined) throw new CliError("--server HOST:PORT is required (the gateway: attr-rag serve); for a run without a server use `attr-rag batch run`");
  return { server: o.server, token: o.token, tlsCa: o.tlsCa };
}

function withServerOptions(command: Command): Command {
  return command
    .option("--server <host:port>", "the gateway (attr-rag serve), embedded or distributed")
    .option("--token <token>", "bearer token (default: $ATTR_RAG_TOKEN)")
    .option("--tls-ca <file>", "PEM root certificate: connect with TLS");
}

export function readBatchFile(file: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (err) {
    throw new CliError(`cannot read ${file}: ${(err as Error).message}`, 2, { cause: err });
  }
}

function checkId(id: string | undefined): string | undefined {
  if (id !== undefined && !isBatchId(id)) throw new CliError(`--id must be 1-64 letters, digits, '-' or '_', got "${id}"`);
  return id;
}

/** Follows a batch until it ends with a progress bar (stderr); returns the last state. */
export async function watchWithProgress(label: string, watch: (onBatch: (b: Batch) => void) => Promise<Batch>, json: boolean): Promise<Batch> {
  const bar = progressBar(label);
  const last = await watch((b) => {
    if (json) process.stdout.write(`${JSON.stringify(batchJson(b))}\n`);
    else bar.update(finishedOf(b), b.totalItems, progressDetail(b));
  });
  bar.done();
  return last;
}

function batchJson(b: Batch): unknown {
  return {
    id: b.batchId,
    state: stateName(b),
    total: b.totalItems,
    ...b.counts,
    items_per_minute: b.itemsPerMinute,
    ...(b.etaSeconds !== undefined ? { eta_seconds: b.etaSeconds } : {}),
    created: new Date(Number(b.createdUnixMs)).toISOString(),
    ...(b.finishedUnixMs !== undefined ? { finished: new Date(Number(b.finishedUnixMs)).toISOString() } : {}),
    label: b.label,
    items_sha256: b.itemsSha256,
    ...(b.webhook !== undefined
      ? {
          webhook: {
            url: b.webhookUrl,
            state: webhookStateName(b.webhook),
            attempts: b.webhook.attempts,
            last_error: b.webhook.lastError,
            ...(b.webhook.settledUnixMs !== undefined ? { settled: new Date(Number(b.webhook.settledUnixMs)).toISOString() } : {}),
          },
        }
      : {}),
  };
}

function printBatch(b: Batch, json: boolean | undefined): void {
  process.stdout.write(json ? `${JSON.stringify(batchJson(b))}\n` : `${batchLine(b)}\n`);
}

/** Exit status of a batch that ended: 0 completed (items may have failed: see the results), 1 cancelled. */
function endCode(b: Batch): number {
  return b.state === BatchState.BATCH_STATE_COMPLETED ? 0 : 1;
}

/** Streams results from where `out` stops (checking it really stops there), appending each new one. */
export async function downloadResults(batches: RemoteBatches, batchId: string, out: ResultsFile, follow: boolean, signal: AbortSignal): Promise<number> {
  let written = 0;
  // Resume at the file's last row, which must come back first: otherwise the file is not this batch's prefix
  // and every result is read again (ids already in the file are still never written twice).
  let offset = Math.max(0, out.count - 1);
  let checked = out.count === 0;
  const read = (from: number) =>
    batches.results(
      batchId,
      from,
      follow,
      (r) => {
        if (!checked) {
          checked = true;
          if (r.itemId !== out.order.at(-1)) throw new RestartFromZero();
        }
        if (out.append(r)) written++;
        if (written % 100 === 0) out.sync();
      },
      signal,
    );
  try {
    await read(offset);
  } catch (err) {
    if (!(err instanceof RestartFromZero)) throw err;
    offset = 0;
    checked = true;
    await read(0);
  }
  out.sync();
  return written;
}

class RestartFromZero extends Error {}

export function registerBatchCommand(program: Command): void {
  const batch = program
    .command("batch")
    .summary("submit, watch and read back durable batches of questions")
    .description(
      [
        "Batches of Asks for pipelines: submitted once, run by the gateway (every worker in distributed mode), kept",
        "durably (SQLite embedded, JetStream distributed) and read back at any time, resuming where a reader stopped.",
        "A batch file has one JSON object per line: {\"id\": …, \"question\": …, and optionally the ask flags in",
        "snake_case: \"k\", \"mode\", \"max_tokens\", \"method\", \"strategy\", …}. See docs/batches.md.",
      ].join("\n"),
    );

  const submit = withServerOptions(
    batch
      .command("submit")
      .description("validate every row of FILE.jsonl, then submit them as one batch (ask flags given here are every row's defaults)")
      .argument("<file>", "the batch file (JSON lines)")
      .option("--id <id>", "the batch id and idempotency key: submitting the same file again returns the same batch (default: a new id)")
      .option("--label <text>", "a label to recognise the batch by")
      .option("--webhook-url <url>", "POST a signed event there when the batch ends (the gateway needs a webhook signing secret; docs/batches.md)")
      .option("--wait", "then follow its progress until it ends")
      .option("--out <file.jsonl>", "with --wait: write the results there as they finish")
      .option("--format <rows|openai>", FORMAT_HELP, "rows")
      .option("--json", "print the batch (and progress, with --wait) as JSON lines"),
  );
  addAskRequestOptions(submit).action(async (file: string, o: ServerFlags & Record<string, unknown> & { id?: string; label?: string; wait?: boolean; out?: string; format?: string; webhookUrl?: string }) => {
    const server = serverOf(o);
    const format = resultsFormat(o.format);
    const items = batchItemsFromJsonl(readBatchFile(file), file, defaultsFromFlags(o));
    const batchId = checkId(o.id) ?? `b-${new Date().toISOString().replace(/[-:T]/g, "").slice(0, 14)}-${randomBytes(4).toString("hex")}`;
    if (o.out !== undefined && !o.wait) throw new CliError("--out needs --wait (or read the results later: attr-rag batch results ID --out FILE)");
    const batches = new RemoteBatches(server);
    const controller = new AbortController();
    const stop = abortOnSigint(controller);
    try {
      // The id makes a retry safe: the gateway returns the batch it already queued instead of a second one.
      let created;
      for (let attempt = 1; ; attempt++) {
        try {
          created = await batches.create(batchId, items, o.label ?? "", o.webhookUrl);
          break;
        } catch (err) {
          const cause = (err as { cause?: { code?: number } }).cause;
          if (attempt >= 3 || (cause?.code !== status.UNAVAILABLE && cause?.code !== status.DEADLINE_EXCEEDED)) throw err;
          process.stderr.write(`attr-rag: ${(err as Error).message}; trying again with the same batch id\n`);
          await new Promise((r) => setTimeout(r, 1_000 * attempt));
        }
      }
      const b = created.batch!;
      if (!o.json) process.stderr.write(`attr-rag: ${created.created ? "submitted" : "already submitted (same id and items)"}: batch ${b.batchId} with ${b.totalItems} items\n`);
      if (o.json) process.stdout.write(`${JSON.stringify({ ...(batchJson(b) as object), created: created.created })}\n`);
      else printBatch(b, false);
      if (!o.wait) return;
      const out = o.out !== undefined ? ResultsFile.open(o.out, format) : undefined;
      try {
        const reading = out !== undefined ? downloadResults(batches, b.batchId, out, true, controller.signal) : Promise.resolve(0);
        const last = await watchWithProgress(`batch ${b.batchId}`, (onBatch) => batches.watch(b.batchId, onBatch, controller.signal), o.json ?? false);
        await reading;
        if (!o.json) process.stderr.write(`attr-rag: batch ${b.batchId} ${stateName(last)}: ${progressDetail(last)}${out !== undefined ? `; results in ${out.path}` : ""}\n`);
        process.exitCode = endCode(last);
      } finally {
        out?.close();
      }
    } finally {
      stop();
      batches.close();
    }
  });

  withServerOptions(batch.command("status").description("the batch's state, counts, rate and ETA").argument("<id>", "batch id").option("--json", "print it as JSON")).action(
    async (id: string, o: ServerFlags) => {
      const batches = new RemoteBatches(serverOf(o));
      try {
        printBatch(await batches.get(checkId(id)!), o.json);
      } finally {
        batches.close();
      }
    },
  );

  withServerOptions(batch.command("watch").description("follow the batch's progress until it ends (exit 0 completed, 1 cancelled)").argument("<id>", "batch id").option("--json", "one JSON line per update")).action(
    async (id: string, o: ServerFlags) => {
      const batches = new RemoteBatches(serverOf(o));
      const controller = new AbortController();
      const stop = abortOnSigint(controller);
      try {
        const last = await watchWithProgress(`batch ${id}`, (onBatch) => batches.watch(checkId(id)!, onBatch, controller.signal), o.json ?? false);
        if (!o.json) printBatch(last, false);
        process.exitCode = endCode(last);
      } finally {
        stop();
        batches.close();
      }
    },
  );

  withServerOptions(batch.command("cancel").description("cancel the batch: running items stop, queued ones never start, finished results stay").argument("<id>", "batch id").option("--json", "print it as JSON")).action(
    async (id: string, o: ServerFlags) => {
      const batches = new RemoteBatches(serverOf(o));
      try {
        printBatch(await batches.cancel(checkId(id)!), o.json);
      } finally {
        batches.close();
      }
    },
  );

  withServerOptions(batch.command("list").description("batches, newest first").option("--limit <n>", "at most this many", "50").option("--json", "one JSON line per batch")).action(
    async (o: ServerFlags & { limit: string }) => {
      const limit = positiveInt("--limit", o.limit);
      const batches = new RemoteBatches(serverOf(o));
      try {
        let token = "";
        let shown = 0;
        do {
          const page = await batches.list(Math.min(1_000, limit - shown), token);
          for (const b of page.batches) printBatch(b, o.json);
          shown += page.batches.length;
          token = page.nextPageToken;
        } while (token !== "" && shown < limit);
      } finally {
        batches.close();
      }
    },
  );

  withServerOptions(
    batch
      .command("results")
      .description("write the batch's results to FILE.jsonl, resuming a partial file (an item is never written twice)")
      .argument("<id>", "batch id")
      .requiredOption("--out <file.jsonl>", "results file (rows as in docs/batches.md)")
      .option("--format <rows|openai>", FORMAT_HELP, "rows")
      .option("--follow", "keep going until the batch ends"),
  ).action(async (id: string, o: ServerFlags & { out: string; follow?: boolean; format?: string }) => {
    const format = resultsFormat(o.format);
    const batches = new RemoteBatches(serverOf(o));
    const controller = new AbortController();
    const stop = abortOnSigint(controller);
    const out = ResultsFile.open(o.out, format);
    try {
      const before = out.count;
      const written = await downloadResults(batches, checkId(id)!, out, o.follow ?? false, controller.signal);
      const b = await batches.get(id);
      process.stderr.write(`attr-rag: ${written} results written to ${o.out} (${before} were there already); batch ${id} ${stateName(b)}, ${finishedOf(b)}/${b.totalItems} done${hasEnded(b.state) ? "" : " so far"}\n`);
    } finally {
      out.close();
      stop();
      batches.close();
    }
  });

  const run = batch
    .command("run")
    .description("run a batch file here, embedded (no server): results to --out as they finish; run it again to resume")
    .argument("<file>", "the batch file (JSON lines)")
    .requiredOption("--out <file.jsonl>", "results file (resumed, never an item twice)")
    .option("--id <id>", "batch id (default: derived from the file and flags, so the same command resumes)")
    .option("--format <rows|openai>", FORMAT_HELP, "rows")
    .option("--json", "progress as JSON lines on stdout");
  addConfigOptions(addAskRequestOptions(run), RUN_KEYS).action(
    async (file: string, o: Record<string, unknown> & { out: string; id?: string; json?: boolean; format?: string }) => {
      const format = resultsFormat(o.format);
      const controller = new AbortController();
      const stop = abortOnSigint(controller);
      try {
        const last = await runBatchEmbedded({ file, text: readBatchFile(file), out: o.out, format, id: checkId(o.id), json: o.json ?? false, options: o }, controller.signal);
        process.exitCode = endCode(last);
      } finally {
        stop();
      }
    },
  );
}
