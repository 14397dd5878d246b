// `attr-rag bench peers`: the occlusion workload through our strategies and the peers, each system in its own
// process, round after round, and the report (docs/benchmarks.md, "Beside node-llama-cpp and llama-server").
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError } from "@attr-rag/core";
import { loadModelArg, readGgufHeader } from "@attr-rag/engine";
import type { DeviceCeiling } from "../engine/deviceCeiling.js";
import { benchPromptSegments } from "../engine/occlusionBench.js";
import { readBenchCorpus } from "../engine/benchCorpus.js";
import { describeRun } from "../record/runRecord.js";
import { isOurs, mergeRuns, reportSystems, type ModelShape } from "./peerReport.js";
import type { BenchSystem, OurSystem, PeerGpu, PeerSystem, PeerWorkload, SystemRun } from "./peerTypes.js";
import { runLlamaServer } from "./runLlamaServer.js";

const here = dirname(fileURLToPath(import.meta.url));
/** The repository this package was built in (packages/bench/dist/peers → ../../../..). */
const REPO_ROOT = resolve(here, "../../../..");
const PEER_CHILD = resolve(here, "peerChild.js");

/** Where the peers are by default: the llama-server build and node-llama-cpp's install folder of this checkout. */
export const PEER_LOCATIONS = { llamaServer: join(REPO_ROOT, ".cache/llama-server/llama-server"), nodeLlamaCpp: join(REPO_ROOT, "bench/peers") };

export interface PeersBenchOptions {
  /** The model as the report names it (as given: a relative path or a cache name). */
  readonly model: string;
  readonly modelPath: string;
  readonly sets: number;
  readonly setTokens: number;
  readonly maxTokens: number;
  readonly ours: readonly OurSystem[];
  readonly peers: readonly PeerSystem[];
  /** corpus.jsonl or a text file the sets are cut from. */
  readonly corpus: string;
  readonly threads: number;
  readonly batchSize: number;
  readonly gpu: PeerGpu;
  readonly llamaServer: string;
  readonly nodeLlamaCpp: string;
  readonly runs: number;
  readonly log: (line: string) => void;
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

export async function runPeersBench(o: PeersBenchOptions) {
  if (o.ours.length + o.peers.length === 0) throw new InputError("nothing to run: give --strategies or --peers");
  // The backend first: the run record names it, and the children inherit it.
  const gpuEnv = o.gpu !== "cpu" ? { ATTR_RAG_GPU: o.gpu, ATTR_RAG_GPU_LAYERS: "-1" } : { ATTR_RAG_GPU: "cpu" };
  Object.assign(process.env, gpuEnv);
  const run = describeRun();
  const corpus = await readBenchCorpus(o.corpus);

  // The prompts, tokenized once by our tokenizer: every system gets these very ids.
  const model = await loadModelArg(o.modelPath);
  let workload: PeerWorkload;
  let shape: ModelShape;
  let info: { nParams: number; description: string };
  try {
    const s = benchPromptSegments(model, corpus, o.sets, o.setTokens);
    const blocks = s.blocks.map((b) => [...b]);
    const prompt = (skip: number) => [...s.prefix, ...blocks.filter((_, i) => i !== skip).flat(), ...s.suffix];
    const prompts = [prompt(-1), ...blocks.map((_, j) => prompt(j))];
    workload = {
      model: o.modelPath,
      segments: { prefix: [...s.prefix], blocks, suffix: [...s.suffix] },
      prompts,
      bos: model.info.addBos ? model.info.bos : null,
      maxTokens: o.maxTokens,
      threads: o.threads,
      batchSize: o.batchSize,
      // As `bench occlusion` sizes a sequence: the prompt, the answer and a draft window, to a power of two.
      sequenceCells: 2 ** Math.ceil(Math.log2(prompts[0]!.length + o.maxTokens + 128)),
      gpu: o.gpu,
    };
    shape = await modelShape(o.modelPath, model.info);
    info = { nParams: model.info.nParams, description: model.info.description };
  } finally {
    await model.dispose();
  }

  const dir = mkdtempSync(join(tmpdir(), "attr-rag-peers-"));
  const workloadPath = join(dir, "workload.json");
  writeFileSync(workloadPath, JSON.stringify(workload));
  const env = { ...process.env, ...gpuEnv };
  const order: BenchSystem[] = [...o.ours, ...o.peers];
  const runs = new Map<BenchSystem, SystemRun[]>();
  const skipped: Record<string, string> = {};
  let ceiling: DeviceCeiling | undefined;
  try {
    // Round after round, every system once per round: a slow stretch of the machine falls on all of them.
    for (let round = 1; round <= o.runs; round++) {
      for (const [i, system] of order.entries()) {
        if (skipped[system] !== undefined) continue;
        const label = `${system} (${i + 1}/${order.length}${o.runs > 1 ? `, round ${round}/${o.runs}` : ""})`;
        o.log(`bench peers: ${label}`);
        try {
          const r =
            system === "llama-server" || system === "llama-server-serial"
              ? await runLlamaServer(system === "llama-server-serial", workload, o.llamaServer, REPO_ROOT)
              : await runChild(workloadPath, system, o.nodeLlamaCpp, isOurs(system) && ceiling === undefined, env);
          ceiling ??= r.ceiling;
          runs.set(system, [...(runs.get(system) ?? []), r]);
          o.log(`bench peers: ${label} ${(r.wall_ms / 1000).toFixed(1)} s`);
        } catch (err) {
          // A missing or failing peer is reported and the others still run; our own strategies must not fail.
          if (isOurs(system)) throw err;
          skipped[system] = (err as Error).message;
          runs.delete(system);
          o.log(`bench peers: ${system} skipped: ${(err as Error).message}`);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  const { systems, summary } = reportSystems([...runs.values()].map(mergeRuns), shape, o.maxTokens, ceiling);
  return {
    model: o.model,
    model_description: info.description,
    model_parameters: info.nParams,
    n_sets: o.sets,
    prompt_tokens: workload.prompts[0]!.length,
    max_tokens: o.maxTokens,
    threads: o.threads,
    batch_size: o.batchSize,
    runs: o.runs,
    sequence_cells: workload.sequenceCells,
    gpu: o.gpu,
    ceiling: ceiling ?? null,
    shape,
    systems,
    skipped,
    ...summary,
    run,
  };
}

export type PeersBenchReport = Awaited<ReturnType<typeof runPeersBench>>;

/** The report as `bench peers` prints it without --json. */
export function peersText(report: PeersBenchReport): string[] {
  const { ceiling, systems, skipped } = report;
  const lines = [`model ${report.model}: ${report.n_sets} sets, ${report.prompt_tokens}-token prompt, ${report.max_tokens} new tokens, ${report.threads} threads, ${report.gpu}`];
  if (ceiling) lines.push(`ceiling: ${ceiling.tokens_per_s.toFixed(0)} tokens/s (one batch of ${ceiling.batch_tokens} tokens)`);
  for (const [name, s] of Object.entries(systems)) {
    const same = s.identical_to_naive === null ? "reference" : `${s.identical_to_naive}/${s.answers} identical to naive`;
    lines.push(
      `${`${name}${s.approximate ? " (APPROXIMATE)" : ""}`.padEnd(36)} ${(s.wall_ms / 1000).toFixed(1).padStart(7)} s  ${String(s.tokens_evaluated).padStart(6)} tokens  ` +
        `${s.decode_calls === null ? "     –" : String(s.decode_calls).padStart(6)} decodes  ${(s.macs / 1e9).toFixed(s.macs < 1e10 ? 2 : 0).padStart(6)} G multiply-adds  ${s.peak_rss_mib.toFixed(0)} MiB  ${same}`,
    );
  }
  for (const [name, why] of Object.entries(skipped)) lines.push(`${name}: skipped: ${why}`);
  if (report.speedup !== null) {
    lines.push(
      `${report.fastest_exact} (our fastest exact strategy) is ${report.speedup.toFixed(2)}× faster than ${report.faster_peer} (the faster peer), which does ${report.macs_ratio!.toFixed(2)}× its multiply-adds`,
    );
  }
  return lines;
}
