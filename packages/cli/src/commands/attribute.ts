import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { AttributeRequest, AttributeResponse } from "@attr-rag/contracts";
import { gatewayClient, remoteError, runAttribute, Runtime } from "@attr-rag/gateway";
import { askRequestFromFlags, type AskFlags } from "../ask/askRequestFromFlags.js";
import { attributionText } from "../ask/attributionText.js";
import { CliError } from "../cliError.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli, type ConfigKey } from "../gatewayCli.js";
import { positiveInt } from "../parseArgs.js";
import { abortOnSigint } from "./ask.js";
import { addStrategyOptions } from "../ask/strategyOptions.js";

const EMBEDDED_KEYS: readonly ConfigKey[] = ["store", "model", "embedder", "threads", "gpuLayers", "contextSize", "sequences", "batchSize", "sampling", "kvCache", "flashAttention"];

interface AttributeOptions extends AskFlags, Record<string, unknown> {
  sets: string;
  answer?: string;
  server?: string;
  token?: string;
  tlsCa?: string;
  timeout?: string;
  json?: boolean;
}

/** Context sets from a file: JSON lines {"id"?, "text"} (.jsonl) or passages separated by blank lines. */
export function readSets(path: string): { setId?: string; text: string }[] {
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch (err) {
    throw new CliError(`--sets: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`, 2, { cause: err });
  }
  if (!path.endsWith(".jsonl")) return raw.split(/\n\s*\n/).map((t) => t.trim()).filter((t) => t !== "").map((text) => ({ text }));
  return raw.split("\n").flatMap((line, i) => {
    if (line.trim() === "") return [];
    let doc: { id?: unknown; text?: unknown };
    try {
      doc = JSON.parse(line);
    } catch {
      throw new CliError(`--sets: ${path} line ${i + 1} is not valid JSON`, 2);
    }
    if (typeof doc.text !== "string") throw new CliError(`--sets: ${path} line ${i + 1} has no string "text" field`, 2);
    if (doc.id !== undefined && typeof doc.id !== "string") throw new CliError(`--sets: ${path} line ${i + 1}: "id" must be a string`, 2);
    return [{ ...(doc.id !== undefined ? { setId: doc.id as string } : {}), text: doc.text }];
  });
}

/** `attr-rag attribute`: steps 4-7 on context sets you give (Attribute), embedded or against --server. */
export function registerAttributeCommand(program: Command): void {
  const command = program
    .command("attribute")
    .summary("attribute an answer to context sets you give (no retrieval): occlusion or a coalition method")
    .description(
      [
        "Generates A_full from --sets (or takes --answer), attributes it to each set with --method and selects the sets",
        "that shaped it, embedded (opening --model here; --store gives the embedder for the cosine metric) or against a",
        "gateway with --server. --sets is a .jsonl file of {\"id\", \"text\"} lines or a text file of passages separated by",
        "blank lines. Prints the α table and the selection; --json prints the AttributeResponse as one JSON line.",
      ].join("\n"),
    )
    .argument("<question>", "the question")
    .requiredOption("--sets <file>", "the context sets: .jsonl ({\"id\",\"text\"} per line) or passages separated by blank lines")
    .option("--answer <text>", "attribute this answer instead of generating A_full")
    .option("--server <host:port>", "call a running `attr-rag serve` instead of running embedded")
    .option("--token <token>", "bearer token for --server (default: $ATTR_RAG_TOKEN)")
    .option("--tls-ca <file>", "PEM root certificate: connect to --server with TLS")
    .option("--timeout <seconds>", "deadline for --server")
    .option("--method <m>", "occlusion (default) | leave-one-out | shapley | kernel-shap | tmc-shapley | beta-shapley | contextcite")
    .option("--samples <n>", "coalitions or permutations of the sampling methods (default 64)")
    .option("--seed <n>", "seed of the sampling methods (default 0)")
    .option("--beta-alpha <x>", "beta-shapley: α (default 16)")
    .option("--beta-beta <x>", "beta-shapley: β (default 1)")
    .option("--max-tokens <n>", "max tokens of A_full and of each occluded answer")
    .option("--metrics <list>", "selection metrics: cosine, jaccard, rouge1, rouge2, rougeL, rougeLsum, loglik")
    .option("--min-votes <n>", "selection: metrics needed to keep a set")
    .option("--include-occluded", "include each occluded answer's text")
    .option("--json", "print the AttributeResponse as one JSON line");
  addConfigOptions(addStrategyOptions(command), EMBEDDED_KEYS).action(async (question: string, o: AttributeOptions) => {
    if (question.trim() === "") throw new CliError("the question is empty");
    const sets = readSets(o.sets);
    if (sets.length === 0) throw new CliError(`--sets: ${o.sets} holds no context sets`);
    const flags = askRequestFromFlags(question, o);
    const request = AttributeRequest.fromPartial({
      question,
      sets,
      generation: flags.generation!,
      selection: flags.selection!,
      attribution: flags.attribution!,
      includeOccludedAnswers: o.includeOccluded ?? false,
      ...(o.answer !== undefined ? { initialAnswer: o.answer } : {}),
    });
    const controller = new AbortController();
    const stop = abortOnSigint(controller);
    let response: AttributeResponse;
    try {
      response = o.server !== undefined ? await remoteAttribute(o, request, controller.signal) : await embeddedAttribute(o, request, controller.signal);
    } finally {
      stop();
    }
    if (o.json) {
      process.stdout.write(`${JSON.stringify(AttributeResponse.toJSON(response))}\n`);
      return;
    }
    process.stdout.write(`A_full:\n${response.initialAnswer}\n\n${attributionText(response.attribution!, response.selection!)}`);
    process.stdout.write(`\n${response.selection!.summary}\n`);
  });
}

async function embeddedAttribute(o: AttributeOptions, request: AttributeRequest, signal: AbortSignal): Promise<AttributeResponse> {
  const config = configFromOptions(o, EMBEDDED_KEYS);
  const runtime = await Runtime.open(config, (line) => {
    if (!o.json) process.stderr.write(`${line}\n`);
  }).catch((err: unknown) => {
    throw gatewayErrorToCli(err);
  });
  try {
    return await runAttribute(runtime, request, signal).catch((err: unknown) => {
      throw signal.aborted ? new CliError("interrupted", 130, { cause: err }) : gatewayErrorToCli(err);
    });
  } finally {
    await runtime.dispose();
  }
}

function remoteAttribute(o: AttributeOptions, request: AttributeRequest, signal: AbortSignal): Promise<AttributeResponse> {
  const timeout = o.timeout !== undefined ? positiveInt("--timeout", o.timeout) : undefined;
  const token = o.token ?? process.env.ATTR_RAG_TOKEN;
  const { client, metadata, callOptions } = gatewayClient({
    address: o.server!,
    ...(token !== undefined ? { token } : {}),
    ...(o.tlsCa !== undefined ? { tlsCa: o.tlsCa } : {}),
    ...(timeout !== undefined ? { timeout } : {}),
  });
  return new Promise<AttributeResponse>((resolve, reject) => {
    const call = client.attribute(request, metadata, callOptions, (err, res) =>
      err ? reject(signal.aborted ? new CliError("interrupted", 130, { cause: err }) : remoteError(err)) : resolve(res),
    );
    signal.addEventListener("abort", () => call.cancel(), { once: true });
  }).finally(() => client.close());
}
