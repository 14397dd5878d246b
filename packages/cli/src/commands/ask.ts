import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { remoteAsk, renderReport, runAsk, Runtime } from "@attr-rag/gateway";
import { askRequestFromFlags, type AskFlags } from "../ask/askRequestFromFlags.js";
import { AskPrinter } from "../ask/askPrinter.js";
import { CliError } from "../cliError.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli, type ConfigKey } from "../gatewayCli.js";
import { positiveInt } from "../parseArgs.js";
import { addAskRequestOptions } from "../ask/askRequestOptions.js";

/** Settings of the embedded pipeline (a server has its own). */
export const EMBEDDED_KEYS: readonly ConfigKey[] = ["store", "model", "embedder", "reranker", "threads", "gpuLayers", "contextSize", "sequences", "batchSize", "sampling", "kvCache", "flashAttention"];

interface AskOptions extends AskFlags, Record<string, unknown> {
  server?: string;
  token?: string;
  tlsCa?: string;
  timeout?: string;
  json?: boolean;
  report?: string;
}

/** Runs one Ask embedded (opening store and model here) or against --server, showing it with `printer`. */
export async function askOnce(question: string, o: AskOptions, printer: AskPrinter, signal: AbortSignal): Promise<void> {
  const request = askRequestFromFlags(question, o);
  if (o.server !== undefined) {
    const timeout = o.timeout !== undefined ? positiveInt("--timeout", o.timeout) : undefined;
    const token = o.token ?? process.env.ATTR_RAG_TOKEN;
    await remoteAsk({ address: o.server, ...(token !== undefined ? { token } : {}), ...(o.tlsCa !== undefined ? { tlsCa: o.tlsCa } : {}), ...(timeout !== undefined ? { timeout } : {}) }, request, printer.onEvent, signal);
    return;
  }
  const config = configFromOptions(o, EMBEDDED_KEYS);
  const log = (line: string) => {
    if (!printer.json) process.stderr.write(`${line}\n`);
  };
  const runtime = await Runtime.open(config, log).catch((err: unknown) => {
    throw gatewayErrorToCli(err);
  });
  try {
    await runAsk(runtime, request, printer.onEvent, signal).catch((err: unknown) => {
      throw signal.aborted ? new CliError("interrupted", 130, { cause: err }) : gatewayErrorToCli(err);
    });
  } finally {
    await runtime.dispose();
  }
}

export function writeReport(path: string, question: string, printer: AskPrinter): void {
  try {
    writeFileSync(path, renderReport({ question, events: printer.events }));
  } catch (err) {
    throw new CliError(`--report: cannot write ${path}: ${(err as Error).message}`, 1, { cause: err });
  }
}

/** Aborts on the first SIGINT (the engine stops at once); returns a function that removes the handler. */
export function abortOnSigint(controller: AbortController): () => void {
  const onSigint = () => {
    process.stderr.write("attr-rag: interrupted; stopping\n");
    controller.abort(new Error("interrupted"));
  };
  process.once("SIGINT", onSigint);
  return () => process.off("SIGINT", onSigint);
}

/** `attr-rag ask`: the whole Attr-RAG pipeline (or a baseline) for one question. */
export function registerAskCommand(program: Command): void {
  const command = program
    .command("ask")
    .summary("answer a question from the store and show which passages shaped the answer")
    .description(
      [
        "Runs retrieve → align → re-rank → A_full → occlude each set → α per metric → select → fill gaps → final answer,",
        "or, with --method, attributes by a coalition method on the log-likelihood of A_full instead of occlusion,",
        "embedded (opening --store and --model in this process) or against a gateway with --server HOST:PORT.",
        "Stage progress goes to stderr; the answer, its citations and the attribution table to stdout.",
        "--json prints every stream event as one JSON line instead; --report writes a self-contained HTML report.",
      ].join("\n"),
    )
    .argument("<question>", "the question")
    .option("--server <host:port>", "ask a running `attr-rag serve` instead of running embedded")
    .option("--token <token>", "bearer token for --server (default: $ATTR_RAG_TOKEN)")
    .option("--tls-ca <file>", "PEM root certificate: connect to --server with TLS")
    .option("--timeout <seconds>", "deadline for --server; the server stops the work when it passes")
    .option("--json", "print every event as a JSON line (nothing else on stdout)")
    .option("--report <file.html>", "write a self-contained HTML report");
  addConfigOptions(addAskRequestOptions(command), EMBEDDED_KEYS).action(async (question: string, o: AskOptions) => {
    const printer = new AskPrinter(o.json ?? false);
    const controller = new AbortController();
    const stop = abortOnSigint(controller);
    try {
      await askOnce(question, o, printer, controller.signal);
    } finally {
      stop();
    }
    if (o.report !== undefined) {
      writeReport(o.report, question, printer);
      if (!printer.json) process.stderr.write(`report written to ${o.report}\n`);
    }
  });
}
