// GPU backends from npm (issue 24), as a user meets them through the CLI: `doctor`, `--gpu`, and a bench on
// the software Vulkan device CI installs (Mesa lavapipe). CI installs @node-llama-cpp/linux-x64-vulkan and
// -cuda 3.22.1 (.ci/run); this machine has no NVIDIA GPU, so the CUDA package is the "installed, no device"
// case. Outside CI a missing package skips its tests with the reason; under CI=true it fails them.
import { createRequire } from "node:module";
import { describe, expect, it } from "vitest";
import { runCli, TEST_MODEL } from "./helpers/runCli.js";

const installed = (name: string) => {
  try {
    createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
};
const CI = process.env.CI === "true";
const cuda = installed("@node-llama-cpp/linux-x64-cuda");
const vulkan = installed("@node-llama-cpp/linux-x64-vulkan");
const LAVAPIPE = { GGML_VK_VISIBLE_DEVICES: "0" };

/** A process that failed cleanly: our one-line error, no stack, no native abort. */
function expectCleanFailure(r: { code: number | null; stderr: string }, code: number): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stderr).not.toMatch(/unexpected error|\n\s+at |GGML_ASSERT|Aborted|core dumped/);
}

describe("--gpu and doctor without a GPU package", () => {
  it("gpu - a bad --gpu value is a usage error naming the choices", async () => {
    const r = await runCli(["doctor", "--gpu", "tpu"]);
    expectCleanFailure(r, 2);
    expect(r.stderr).toMatch(/--gpu must be one of auto, cuda, vulkan, cpu, got "tpu"/);
  });

  it("gpu - --gpu cpu loads no GPU backend; doctor reports the CPU device, the llama.cpp build and the addon", async () => {
    const r = await runCli(["doctor", "--gpu", "cpu", "--json", "--model", TEST_MODEL]);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ backend: "cpu", choice: "cpu", summary: "backend cpu (--gpu cpu)" });
    expect(report.devices.map((d: { backend: string }) => d.backend)).toEqual(["CPU"]);
    expect(report.llama.release).toMatch(/llama\.cpp/);
    expect(report.llama.addonPath).toMatch(/attr_rag_native\.node$/);
    // No GPU in use: the model stays on the CPU, and the GGUF header was read for its shape.
    expect(report.model).toMatchObject({ offloadDevice: null, fits: false, architecture: "llama" });
    expect(report.model.layers).toBeGreaterThan(0);
    expect(report.model.modelBytes).toBeGreaterThan(0);
    // Output rows are picked in the decode graph on the CPU backend too (a fused op there).
    expect(report.sampling).toEqual({ path: "device", why: "" });
  });
});

describe.skipIf(!cuda && !CI)(`the CUDA package installed, no NVIDIA GPU${!cuda && !CI ? " (skipped: @node-llama-cpp/linux-x64-cuda is not installed)" : ""}`, () => {
  it("gpu - auto falls back to the CPU with one clear line saying why CUDA was not used", async () => {
    expect(cuda, "CI installs @node-llama-cpp/linux-x64-cuda@3.22.1").toBe(true);
    const r = await runCli(["doctor", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).backend).toBe("cpu");
    // The engine's log line (JSON: stderr is a pipe here).
    const lines = r.stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as { component: string; msg: string }).filter((l) => l.component === "engine" && l.msg.startsWith("backend"));
    expect(lines).toHaveLength(1);
    expect(lines[0]!.msg).toMatch(/^backend cpu \(auto; cuda: the (NVIDIA driver|CUDA 13 runtime) is not installed \(lib\S+ not found/);
  });

  it("gpu - --gpu cuda fails with exit 2 naming what is missing, never a crash (doctor and ask)", async () => {
    const doctor = await runCli(["doctor", "--gpu", "cuda"]);
    expectCleanFailure(doctor, 2);
    expect(doctor.stderr).toMatch(/GpuBackendError: --gpu cuda \(ATTR_RAG_GPU\): the (NVIDIA driver|CUDA 13 runtime) is not installed \((libcuda\.so\.1|libcudart\.so\.13|libcublas\.so\.13) not found/);
    expect(doctor.stderr).toMatch(/use --gpu auto or cpu to run on the CPU/);
    const ask = await runCli(["ask", "How do I collect oxygen gas over water?", "--gpu", "cuda", "--model", TEST_MODEL, "--store", "/nonexistent-store"]);
    expectCleanFailure(ask, 2);
    // The GPU is checked first, before the (missing) store.
    expect(ask.stderr).toMatch(/GpuBackendError: --gpu cuda/);
  });
});

describe.skipIf(!vulkan && !CI)(`the Vulkan package on Mesa lavapipe${!vulkan && !CI ? " (skipped: @node-llama-cpp/linux-x64-vulkan is not installed)" : ""}`, () => {
  it("gpu - doctor --gpu vulkan reports the lavapipe device as a software renderer and whether the model fits it", async () => {
    expect(vulkan, "CI installs @node-llama-cpp/linux-x64-vulkan@3.22.1").toBe(true);
    const r = await runCli(["doctor", "--gpu", "vulkan", "--json", "--model", TEST_MODEL], LAVAPIPE);
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ backend: "vulkan", software: true });
    expect(report.summary).toMatch(/software Vulkan, not a GPU/);
    const device = report.devices.find((d: { backend: string }) => d.backend === "Vulkan");
    expect(device).toMatchObject({ type: "gpu", software: true });
    expect(device.description).toMatch(/llvmpipe/);
    expect(device.memoryTotal).toBeGreaterThan(0);
    expect(report.llama.gpuLibraryDir).toMatch(/linux-x64-vulkan/);
    expect(report.model.offloadDevice).toBe(device.name);
    expect(report.model.fits).toBe(true);
    expect(report.model.cellsThatFit).toBeGreaterThan(0);
    // The backend's kernels really ran on the device, in a child process, every layer offloaded.
    expect(report.kernels).toMatchObject({ ok: true, tokens: 4 });
    expect(report.kernels.ms).toBeGreaterThan(0);
    // Lavapipe's driver aborted on the picks graph: a software renderer reads rows on the host, and says why.
    expect(report.sampling.path).toBe("host");
    expect(report.sampling.why).toMatch(/software Vulkan renderer, whose driver aborted on the picks graph/);
    // In words, too.
    const text = await runCli(["doctor", "--gpu", "vulkan", "--model", TEST_MODEL], LAVAPIPE);
    expect(text.stdout).toMatch(/--gpu-layers -1: every layer fits Vulkan0; about [\d,]+ KV cells fit beside it/);
    expect(text.stdout).toMatch(/^kernels: ran on Vulkan0 \(4 tokens of the shipped model, every layer offloaded, [\d.]+ s\)$/m);
    expect(text.stdout).toMatch(/^output rows: whole logits rows scanned on the host \(device Vulkan0 .*software Vulkan renderer/m);
  });

  it("gpu - without GGML_VK_VISIBLE_DEVICES a software device is not taken for a GPU: --gpu vulkan fails with exit 2 saying how to allow it", async () => {
    const r = await runCli(["doctor", "--gpu", "vulkan"]);
    expectCleanFailure(r, 2);
    expect(r.stderr).toMatch(/the Vulkan backend found no GPU \(a software device such as lavapipe is used only when GGML_VK_VISIBLE_DEVICES names it/);
  });

  it("gpu - bench occlusion --gpu vulkan runs on lavapipe, exact strategies agree with naive, and the report says software Vulkan, not a GPU", async () => {
    const r = await runCli(
      ["bench", "occlusion", "--gpu", "vulkan", "--model", TEST_MODEL, "--sets", "2", "--set-tokens", "24", "--max-tokens", "6", "--strategies", "naive,prefix-shared", "--json"],
      LAVAPIPE,
    );
    expect(r.code, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.run.backend).toMatchObject({ name: "vulkan", gpu_layers: -1, label: "software Vulkan, not a GPU" });
    expect(report.run.backend.devices[0]).toMatch(/llvmpipe/);
    expect(report.strategies["prefix-shared"].first_divergences.every((d: { naive_margin: number }) => d.naive_margin <= 0.1)).toBe(true);
    // --gpu named: the backend's kernels were run once, in a child process, before the bench.
    expect(r.stderr).toMatch(/^attr-rag: vulkan kernels ran on Vulkan0 \(4 tokens of the shipped model in [\d.]+ s\)$/m);
  });
});
