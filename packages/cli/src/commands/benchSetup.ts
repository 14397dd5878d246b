// What the cluster benchmarks (bench cluster, bench batch) share: their common flags, the model they load and
// the store they ask, by default the demo corpus ingested into a temporary store.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { resolveModel } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { demoModelPath, ingestDemoCorpus } from "./demo.js";
import { positiveInt } from "../parseArgs.js";
import { InputError } from "@attr-rag/core";

export interface ClusterBenchFlags {
  workers: string;
  model?: string;
  store?: string;
  k: string;
  maxTokens: string;
  threads: string;
  contextSize: string;
  json?: boolean;
}

/** The model as reports name it: as given (a relative path or a cache name), not this machine's absolute path. */
export const reportedModel = (o: ClusterBenchFlags) => o.model ?? "examples/models/stories260K.gguf";

/** --model, --store, --k and --max-tokens, as every Ask benchmark takes them. */
export function addAskBenchOptions(command: Command): Command {
  return command
    .option("--model <path|name>", "generator GGUF (default: the demo model)")
    .option("--store <dir>", "chunk store (default: the demo corpus in a temporary store)")
    .option("--k <n>", "chunks retrieved per Ask", "8")
    .option("--max-tokens <n>", "max new tokens per answer", "64");
}

export function addClusterBenchOptions(command: Command): Command {
  return addAskBenchOptions(command.option("--workers <list>", "worker counts, comma-separated", "1,2"))
    .option("--threads <n>", "engine threads per worker (and of the embedded gateway)", "1")
    .option("--context-size <n>", "generator KV cells per worker (4 sequences share them)", "16384")
    .option("--json", "print the report as one JSON line");
}

/** --model resolved (a path or a cache name), or the demo model without it; a bad name is exit 2. */
export function benchModelPath(model: string | undefined): string {
  try {
    return model !== undefined ? resolveModel(model) : demoModelPath();
  } catch (err) {
    throw err instanceof InputError ? err : new CliError(`--model: ${(err as Error).message}`, 2, { cause: err });
  }
}

/** The checked common flags: worker counts, engine settings and the model path. */
export function clusterBenchSettings(o: ClusterBenchFlags) {
  const workerCounts = o.workers.split(",").map((w) => positiveInt("--workers", w.trim()));
  if (workerCounts.length === 0) throw new CliError("--workers needs at least one count, e.g. 1,2");
  return {
    workerCounts,
    modelPath: benchModelPath(o.model),
    k: positiveInt("--k", o.k),
    maxTokens: positiveInt("--max-tokens", o.maxTokens),
    threads: positiveInt("--threads", o.threads),
    contextSize: positiveInt("--context-size", o.contextSize),
  };
}

/** Runs `work` on --store, or on the demo corpus ingested (with `embedder`) into a temporary store removed afterwards. */
export async function withBenchStore<T>(store: string | undefined, label: string, work: (store: string) => Promise<T>, embedder = "use-lite"): Promise<T> {
  if (store !== undefined) return work(store);
  const tmp = mkdtempSync(join(tmpdir(), `attr-rag-${label.replace(/\s+/g, "-")}-`));
  try {
    const dir = join(tmp, "store");
    await ingestDemoCorpus(dir, label, embedder);
    return await work(dir);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
