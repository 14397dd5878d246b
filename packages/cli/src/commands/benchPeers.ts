import type { Command } from "commander";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import { OUR_SYSTEMS, PEER_LOCATIONS, PEER_SYSTEMS, peersText, runPeersBench, type PeerGpu } from "@attr-rag/bench";
import { InputError, oneOf, positiveInt } from "@attr-rag/core";
import { resolveModel } from "@attr-rag/engine";
import { defaultCorpus } from "../defaultCorpus.js";

interface BenchPeersFlags {
  model: string;
  sets: string;
  setTokens: string;
  maxTokens: string;
  strategies: string;
  peers: string;
  corpus?: string;
  threads?: string;
  batchSize: string;
  gpu: string;
  llamaServer: string;
  nodeLlamaCpp: string;
  runs: string;
  json?: boolean;
}

function listOf<T extends string>(flag: string, value: string, choices: readonly T[]): T[] {
  if (value.trim() === "") return [];
  const values = value.split(",").map((x) => oneOf(flag, x.trim(), choices));
  if (new Set(values).size !== values.length) throw new InputError(`${flag} lists a value twice: ${value}`);
  return values;
}

export function registerBenchPeersCommand(bench: Command): void {
  bench
    .command("peers")
    .summary("the occlusion workload through our strategies, node-llama-cpp and llama-server, answers compared")
    .description(
      [
        "Builds the `bench occlusion` workload (A_full's prompt and one prompt per occluded set, the same token ids",
        "for every system) and runs it through our strategies (--strategies; kv-reuse is APPROXIMATE) and the",
        "peers (--peers): node-llama-cpp 3.22.1 with a LlamaCompletion per prompt all at once, or one prompt at a",
        "time; llama-server of the same llama.cpp release with --parallel n+1 and every prompt at once, or",
        "--parallel 1 and one prompt at a time (cache_prompt). Every system is greedy, gets the same threads,",
        "batch, KV cells per sequence and offload, and runs in its own process after a warm-up. Per system: wall,",
        "tokens evaluated, llama_decode calls where it exposes them, multiply-adds, peak RSS, and answers compared",
        "with our naive's token by token. The ceiling line (tokens/s of one full batch on this backend) is",
        "measured in the same run. A peer that is not installed is skipped with the command that installs it.",
      ].join(" "),
    )
    .requiredOption("--model <path|name>", "GGUF model: a path or a model-cache name")
    .option("--sets <n>", "number of context sets", "10")
    .option("--set-tokens <n>", "tokens per context set", "150")
    .option("--max-tokens <n>", "new tokens per answer", "128")
    .option("--strategies <list>", `ours, from ${OUR_SYSTEMS.join(", ")} (naive is the reference for answers)`, OUR_SYSTEMS.join(","))
    .option("--peers <list>", `from ${PEER_SYSTEMS.join(", ")}`, PEER_SYSTEMS.join(","))
    .option("--corpus <file>", "corpus.jsonl or a text file to cut sets from (default: the demo corpus)")
    .option("--threads <n>", "CPU threads for every system (default: all)")
    .option("--batch-size <n>", "tokens per llama_decode call for every system", "512")
    .option("--gpu <backend>", "cpu | cuda | vulkan: every system offloads every layer to it", "cpu")
    .option("--llama-server <path>", "the llama-server binary (build it with native/scripts/build-llama-server.sh)", PEER_LOCATIONS.llamaServer)
    .option("--node-llama-cpp <dir>", "where node-llama-cpp is installed (npm install --prefix bench/peers --omit=optional --no-save)", PEER_LOCATIONS.nodeLlamaCpp)
    .option("--runs <n>", "rounds: every system runs once per round; the wall reported is the median", "1")
    .option("--json", "print the report as JSON")
    .action(async (o: BenchPeersFlags) => {
      const report = await runPeersBench({
        model: o.model,
        modelPath: resolve(resolveModel(o.model)),
        gpu: oneOf("--gpu", o.gpu, ["cpu", "cuda", "vulkan"] as const) as PeerGpu,
        sets: positiveInt("--sets", o.sets),
        setTokens: positiveInt("--set-tokens", o.setTokens),
        maxTokens: positiveInt("--max-tokens", o.maxTokens),
        ours: listOf("--strategies", o.strategies, OUR_SYSTEMS),
        peers: listOf("--peers", o.peers, PEER_SYSTEMS),
        threads: o.threads !== undefined ? positiveInt("--threads", o.threads) : availableParallelism(),
        batchSize: positiveInt("--batch-size", o.batchSize),
        runs: positiveInt("--runs", o.runs),
        corpus: o.corpus ?? defaultCorpus(),
        llamaServer: o.llamaServer,
        nodeLlamaCpp: o.nodeLlamaCpp,
        log: (line) => process.stderr.write(`${line}\n`),
      });
      process.stdout.write(o.json ? `${JSON.stringify(report)}\n` : `${peersText(report).join("\n")}\n`);
    });
}
