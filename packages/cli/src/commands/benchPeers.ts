import type { Command } from "commander";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { benchPromptSegments, describeRun, readBenchCorpus, readGgufHeader, resolveModel, type DeviceCeiling } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { loadModelArg } from "../modelCli.js";
import { defaultCorpus } from "../defaultCorpus.js";
import { oneOf, positiveInt } from "../parseArgs.js";
import { OUR_SYSTEMS, PEER_SYSTEMS, type BenchSystem, type PeerGpu, type PeerWorkload, type SystemRun } from "../peers/peerTypes.js";
import { isOurs, mergeRuns, reportSystems, type ModelShape } from "../peers/peerReport.js";
import { runLlamaServer } from "../peers/runLlamaServer.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository this CLI was built in (packages/cli/dist/commands → ../../../..). */
const REPO_ROOT = resolve(here, "../../../..");
const PEER_CHILD = resolve(here, "../peers/peerChild.js");

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
  if (new Set(values).size !== values.length) throw new CliError(`${flag} lists a value twice: ${value}`);
  return values;
}

/** Runs one system in a child Node process (its own peak RSS); its stderr is kept for a failure report. */
function runChild(workloadPath: string, system: BenchSystem, peersDir: string, ceiling: boolean, env: NodeJS.ProcessEnv): Promise<SystemRun> {
  const out = join(dirname(workloadPath), `${system}.json`);
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, [PEER_CHILD, workloadPath, system, out, peersDir, ceiling ? "ceiling" : ""], { stdio: ["ignore", "ignore", "pipe"], env });
    let err = "";
    child.stderr!.on("data", (b: Buffer) => (err = (err + b.toString()).slice(-8000)));
    child.on("error", reject);
    child.on("exit", (code, signal) => {
      if (code === 0) resolveRun(JSON.parse(readFileSync(out, "utf8")) as SystemRun);
      else reject(new Error(`${system} failed (${signal ?? `exit ${code}`}): ${err.trim().split("\n").slice(-6).join("\n")}`));
    });
  });
}

async function modelShape(path: string, info: { nParams: number; nVocab: number; nEmbd: number }): Promise<ModelShape> {
  // The input embedding is a lookup, not multiply-adds; a separate output matrix is the vocabulary row.
  const untied = (await readGgufHeader(path)).tensors.some((t) => t.name === "output.weight");
  const vocab = info.nVocab * info.nEmbd;
  return { body_macs_per_token: info.nParams - vocab - (untied ? vocab : 0), vocab_row_macs: vocab };
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
    .option("--llama-server <path>", "the llama-server binary (build it with native/scripts/build-llama-server.sh)", join(REPO_ROOT, ".cache/llama-server/llama-server"))
    .option("--node-llama-cpp <dir>", "where node-llama-cpp is installed (npm install --prefix bench/peers --omit=optional --no-save)", join(REPO_ROOT, "bench/peers"))
    .option("--runs <n>", "rounds: every system runs once per round; the wall reported is the median", "1")
    .option("--json", "print the report as JSON")
    .action(async (o: BenchPeersFlags) => {
      const gpu = oneOf("--gpu", o.gpu, ["cpu", "cuda", "vulkan"] as const) as PeerGpu;
      // The backend first: the run record names it, and the children inherit it.
      const gpuEnv = gpu !== "cpu" ? { ATTR_RAG_GPU: gpu, ATTR_RAG_GPU_LAYERS: "-1" } : { ATTR_RAG_GPU: "cpu" };
      Object.assign(process.env, gpuEnv);
      const run = describeRun();
      const sets = positiveInt("--sets", o.sets);
      const setTokens = positiveInt("--set-tokens", o.setTokens);
      const maxTokens = positiveInt("--max-tokens", o.maxTokens);
      const ours = listOf("--strategies", o.strategies, OUR_SYSTEMS);
      const peers = listOf("--peers", o.peers, PEER_SYSTEMS);
      if (ours.length + peers.length === 0) throw new CliError("nothing to run: give --strategies or --peers");
      const threads = o.threads !== undefined ? positiveInt("--threads", o.threads) : availableParallelism();
      const batchSize = positiveInt("--batch-size", o.batchSize);
      const corpus = await readBenchCorpus(o.corpus ?? defaultCorpus());
      const modelPath = resolve(resolveModel(o.model));

      // The prompts, tokenized once by our tokenizer: every system gets these very ids.
      const model = await loadModelArg(modelPath);
      let workload: PeerWorkload;
      let shape: ModelShape;
      let info: { nParams: number; description: string };
      try {
        const s = benchPromptSegments(model, corpus, sets, setTokens);
        const blocks = s.blocks.map((b) => [...b]);
        const prompt = (skip: number) => [...s.prefix, ...blocks.filter((_, i) => i !== skip).flat(), ...s.suffix];
        const prompts = [prompt(-1), ...blocks.map((_, j) => prompt(j))];
        workload = {
          model: modelPath,
          segments: { prefix: [...s.prefix], blocks, suffix: [...s.suffix] },
          prompts,
          bos: model.info.addBos ? model.info.bos : null,
          maxTokens,
          threads,
          batchSize,
          // As `bench occlusion` sizes a sequence: the prompt, the answer and a draft window, to a power of two.
          sequenceCells: 2 ** Math.ceil(Math.log2(prompts[0]!.length + maxTokens + 128)),
          gpu,
        };
        shape = await modelShape(modelPath, model.info);
        info = { nParams: model.info.nParams, description: model.info.description };
      } finally {
        await model.dispose();
      }

      const dir = mkdtempSync(join(tmpdir(), "attr-rag-peers-"));
      const workloadPath = join(dir, "workload.json");
      writeFileSync(workloadPath, JSON.stringify(workload));
      const env = { ...process.env, ...gpuEnv };
      const order: BenchSystem[] = [...ours, ...peers];
      const rounds = positiveInt("--runs", o.runs);
      const runs = new Map<BenchSystem, SystemRun[]>();
      const skipped: Record<string, string> = {};
      let ceiling: DeviceCeiling | undefined;
      try {
        // Round after round, every system once per round: a slow stretch of the machine falls on all of them.
        for (let round = 1; round <= rounds; round++) {
          for (const [i, system] of order.entries()) {
            if (skipped[system] !== undefined) continue;
            const label = `${system} (${i + 1}/${order.length}${rounds > 1 ? `, round ${round}/${rounds}` : ""})`;
            process.stderr.write(`bench peers: ${label}\n`);
            try {
              const r =
                system === "llama-server" || system === "llama-server-serial"
                  ? await runLlamaServer(system === "llama-server-serial", workload, o.llamaServer, REPO_ROOT)
                  : await runChild(workloadPath, system, o.nodeLlamaCpp, isOurs(system) && ceiling === undefined, env);
              ceiling ??= r.ceiling;
              runs.set(system, [...(runs.get(system) ?? []), r]);
              process.stderr.write(`bench peers: ${label} ${(r.wall_ms / 1000).toFixed(1)} s\n`);
            } catch (err) {
              // A missing or failing peer is reported and the others still run; our own strategies must not fail.
              if (isOurs(system)) throw err;
              skipped[system] = (err as Error).message;
              runs.delete(system);
              process.stderr.write(`bench peers: ${system} skipped: ${(err as Error).message}\n`);
            }
          }
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }

      const { systems, summary } = reportSystems([...runs.values()].map(mergeRuns), shape, maxTokens, ceiling);
      const report = {
        model: o.model,
        model_description: info.description,
        model_parameters: info.nParams,
        n_sets: sets,
        prompt_tokens: workload.prompts[0]!.length,
        max_tokens: maxTokens,
        threads,
        batch_size: batchSize,
        runs: rounds,
        sequence_cells: workload.sequenceCells,
        gpu,
        ceiling: ceiling ?? null,
        shape,
        systems,
        skipped,
        ...summary,
        run,
      };
      if (o.json) {
        process.stdout.write(`${JSON.stringify(report)}\n`);
        return;
      }
      console.log(`model ${o.model}: ${sets} sets, ${report.prompt_tokens}-token prompt, ${maxTokens} new tokens, ${threads} threads, ${gpu}`);
      if (ceiling) console.log(`ceiling: ${ceiling.tokens_per_s.toFixed(0)} tokens/s (one batch of ${ceiling.batch_tokens} tokens)`);
      for (const [name, s] of Object.entries(systems)) {
        const same = s.identical_to_naive === null ? "reference" : `${s.identical_to_naive}/${s.answers} identical to naive`;
        console.log(
          `${`${name}${s.approximate ? " (APPROXIMATE)" : ""}`.padEnd(36)} ${(s.wall_ms / 1000).toFixed(1).padStart(7)} s  ${String(s.tokens_evaluated).padStart(6)} tokens  ` +
            `${s.decode_calls === null ? "     –" : String(s.decode_calls).padStart(6)} decodes  ${(s.macs / 1e9).toFixed(s.macs < 1e10 ? 2 : 0).padStart(6)} G multiply-adds  ${s.peak_rss_mib.toFixed(0)} MiB  ${same}`,
        );
      }
      for (const [name, why] of Object.entries(skipped)) console.log(`${name}: skipped: ${why}`);
      if (summary.speedup !== null) {
        console.log(
          `${summary.fastest_exact} (our fastest exact strategy) is ${summary.speedup.toFixed(2)}× faster than ${summary.faster_peer} (the faster peer), which does ${summary.macs_ratio!.toFixed(2)}× its multiply-adds`,
        );
      }
    });
}
