// node-llama-cpp 3.22.1 on the bench workload, in its own process (peerChild.ts): how a TypeScript user would
// write it. One context with a sequence per prompt and a LlamaCompletion per sequence, all generating at
// once (node-llama-cpp packs every sequence's pending tokens into one llama_decode), or one sequence reused
// prompt after prompt (it then keeps the tokens a new prompt shares with the previous one). It loads the
// llama.cpp libraries our addon loads (@node-llama-cpp/linux-x64 and the GPU packages beside it), never
// downloads or builds (build: "never").
import { createRequire } from "node:module";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { PeerWorkload, SystemRun } from "./peerTypes.js";

/** Where `npm install --prefix bench/peers --omit=optional --no-save` put node-llama-cpp, as an install hint when it is missing. */
export const NODE_LLAMA_CPP_INSTALL = "npm install --prefix bench/peers --omit=optional --no-save";

// The slice of node-llama-cpp's API the bench uses (its own types are in a package we do not build against).
interface Nlc {
  getLlama(o: object): Promise<{ gpu: string | false; dispose(): Promise<void>; loadModel(o: object): Promise<NlcModel> }>;
  LlamaCompletion: new (o: { contextSequence: NlcSequence }) => {
    generateCompletion(input: number[], o: object): Promise<string>;
    dispose(): void;
  };
}
interface NlcModel {
  createContext(o: object): Promise<{ getSequence(): NlcSequence; dispose(): Promise<void> }>;
  dispose(): Promise<void>;
}
interface NlcSequence {
  // input: tokens decoded without an output row; output: with one. Their sum is what went through llama_decode.
  tokenMeter: { usedInputTokens: number; usedOutputTokens: number };
  clearHistory(): Promise<void>;
}

export async function importNodeLlamaCpp(peersDir: string): Promise<Nlc> {
  const manifest = join(peersDir, "package.json");
  if (!existsSync(join(peersDir, "node_modules", "node-llama-cpp"))) {
    throw new Error(`node-llama-cpp is not installed in ${peersDir}: run \`${NODE_LLAMA_CPP_INSTALL}\` in the repository (docs/benchmarks.md)`);
  }
  const entry = createRequire(manifest).resolve("node-llama-cpp");
  return (await import(pathToFileURL(entry).href)) as Nlc;
}

export async function runNodeLlamaCpp(serial: boolean, w: PeerWorkload, peersDir: string): Promise<Omit<SystemRun, "peak_rss_mib">> {
  const nlc = await importNodeLlamaCpp(peersDir);
  const llama = await nlc.getLlama({
    gpu: w.gpu === "cpu" ? false : w.gpu,
    build: "never",
    usePrebuiltBinaries: true,
    skipDownload: true,
    progressLogs: false,
    logLevel: "error",
  });
  try {
    const model = await llama.loadModel({ modelPath: w.model, gpuLayers: w.gpu === "cpu" ? 0 : "max" });
    const sequences = serial ? 1 : w.prompts.length;
    const context = await model.createContext({
      contextSize: w.sequenceCells,
      sequences,
      batchSize: w.batchSize,
      threads: w.threads,
      flashAttention: false,
    });
    const seqs = Array.from({ length: sequences }, () => context.getSequence());
    const completions = seqs.map((contextSequence) => new nlc.LlamaCompletion({ contextSequence }));
    // node-llama-cpp prepends BOS itself; the prompts carry ours.
    const inputs = w.prompts.map((p) => (w.bos !== null && p[0] === w.bos ? p.slice(1) : p));
    const options = (answer: number[]) => ({
      maxTokens: w.maxTokens,
      temperature: 0,
      repeatPenalty: false,
      onToken: (tokens: number[]) => answer.push(...tokens),
    });
    // Warm-up: one short completion, then a clean sequence.
    await completions[0]!.generateCompletion(inputs[0]!.slice(-16), { ...options([]), maxTokens: 2 });
    await seqs[0]!.clearHistory();
    const metered = () => seqs.reduce((n, s) => n + s.tokenMeter.usedInputTokens + s.tokenMeter.usedOutputTokens, 0);
    const meterBefore = metered();
    const answers = w.prompts.map((): number[] => []);
    const t0 = performance.now();
    if (serial) {
      for (const [i, input] of inputs.entries()) await completions[0]!.generateCompletion(input, options(answers[i]!));
    } else {
      await Promise.all(inputs.map((input, i) => completions[i]!.generateCompletion(input, options(answers[i]!))));
    }
    const wall = performance.now() - t0;
    const used = metered() - meterBefore;
    for (const c of completions) c.dispose();
    await context.dispose();
    await model.dispose();
    return {
      system: serial ? "node-llama-cpp-serial" : "node-llama-cpp",
      wall_ms: wall,
      tokens_evaluated: used,
      decode_calls: null,
      answers,
      setup: serial
        ? `node-llama-cpp 3.22.1 (${llama.gpu || "cpu"}): one sequence of ${w.sequenceCells} cells and one LlamaCompletion, prompts one after another (it keeps the tokens shared with the previous prompt); batch ${w.batchSize}, ${w.threads} threads, flash attention off, temperature 0, no repeat penalty`
        : `node-llama-cpp 3.22.1 (${llama.gpu || "cpu"}): ${sequences} sequences × ${w.sequenceCells} cells (split KV), a LlamaCompletion per prompt, all at once; batch ${w.batchSize}, ${w.threads} threads, flash attention off, temperature 0, no repeat penalty`,
    };
  } finally {
    await llama.dispose();
  }
}
