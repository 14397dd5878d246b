// Run by `attr-rag doctor` in a child process (kernelCheck.ts): loads the shipped model with every layer on the
// chosen GPU backend and generates a few tokens, so the GPU's kernels really run. A backend whose kernels cannot
// run on this GPU aborts the process inside ggml (no error reaches JavaScript), which only a child survives.
import { performance } from "node:perf_hooks";
import { Model, shippedModelPath } from "@attr-rag/engine";

const TOKENS = 4;
const started = performance.now();
const model = await Model.load(shippedModelPath(), { gpuLayers: -1 });
try {
  const ctx = await model.createContext({ contextSize: 256, sequences: 1 });
  const it = ctx.generate("Once upon a time", { maxTokens: TOKENS });
  let tokens = 0;
  for (let step = await it.next(); !step.done; step = await it.next()) tokens++;
  process.stdout.write(`${JSON.stringify({ tokens, ms: performance.now() - started, sampling: ctx.info.sampling, samplingWhy: ctx.info.samplingWhy })}\n`);
} finally {
  await model.dispose();
}
