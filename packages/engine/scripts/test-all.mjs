#!/usr/bin/env node
// The engine's `npm test`: the suite on the CPU, then the exactness suite (test/gpu/) on a GPU backend when
// one can run here. Both always run, each with its own report; the exit code says whether both passed.
//
// The GPU run uses ATTR_RAG_GPU when it names a backend, else Vulkan when @node-llama-cpp/linux-x64-vulkan is
// installed (GGML_VK_VISIBLE_DEVICES=0 lets it use a software device such as Mesa's lavapipe, which CI
// installs; every layer offloaded). Outside CI, with no GPU backend package installed it says so and stops
// there; under CI=true its tests fail instead, so a CI that lost the package cannot pass quietly.
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

const root = join(import.meta.dirname, "..");
const vitest = join(root, "../../node_modules/.bin/vitest");
const run = (args, env = {}) => spawnSync(vitest, ["run", ...args], { cwd: root, stdio: "inherit", env: { ...process.env, ...env } }).status ?? 1;

const cpu = run([]);

const installed = (name) => {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
};
const asked = ["cuda", "vulkan"].includes(process.env.ATTR_RAG_GPU ?? "") ? process.env.ATTR_RAG_GPU : undefined;
const gpu = asked ?? (installed("@node-llama-cpp/linux-x64-vulkan") || process.env.CI === "true" ? "vulkan" : undefined);
let gpuStatus = 0;
if (gpu === undefined) {
  console.error("engine: no GPU backend package installed (npm install --no-save @node-llama-cpp/linux-x64-vulkan@3.22.1 and Mesa's lavapipe run test/gpu on a software Vulkan device); the GPU exactness suite did not run");
} else {
  console.error(`engine: the exactness suite on the ${gpu} backend (test/gpu, every layer offloaded)`);
  rmSync(join(root, ".reports/vitest-gpu.json"), { force: true });
  gpuStatus = run(["--config", "vitest.gpu.config.ts"], {
    ATTR_RAG_GPU: gpu,
    ATTR_RAG_GPU_LAYERS: process.env.ATTR_RAG_GPU_LAYERS ?? "-1",
    ...(gpu === "vulkan" ? { GGML_VK_VISIBLE_DEVICES: process.env.GGML_VK_VISIBLE_DEVICES ?? "0" } : {}),
  });
  const report = join(root, ".reports/vitest-gpu.json");
  if (!existsSync(report)) {
    // A crash before vitest reported (a native abort) must still count as a failure in the CI line.
    mkdirSync(dirname(report), { recursive: true });
    const message = `the ${gpu} exactness suite exited ${gpuStatus} before writing its report`;
    writeFileSync(report, JSON.stringify({ numPassedTests: 0, numFailedTests: 1, numPendingTests: 0, numTodoTests: 0, testResults: [{ name: "test/gpu", status: "failed", message, assertionResults: [{ status: "failed", fullName: "GPU exactness suite", failureMessages: [message] }] }] }));
  }
}
process.exitCode = cpu !== 0 || gpuStatus !== 0 ? 1 : 0;
