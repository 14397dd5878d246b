import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { kernelFailure, runKernelCheck } from "../src/doctor/kernelCheck.js";
import { requireGpuKernels } from "../src/doctor/requireGpuKernels.js";

const ABORTING = fileURLToPath(new URL("./fixtures/abortingKernelCheck.mjs", import.meta.url));

describe("doctor's kernel check", () => {
  it("kernels - a child that aborts inside ggml is reported with the CUDA error, where it happened and the fix", async () => {
    const check = await runKernelCheck({ script: ABORTING });
    expect(check.ok).toBe(false);
    expect(check.error).toMatch(/^CUDA error: the provided PTX was compiled with an unsupported toolchain\.; current device: 0, in function ggml_cuda_kernel_can_use_pdl/);
    // Neither the backtrace nor our own backend line is taken for the error.
    expect(check.error).not.toMatch(/libggml-base\.so|attr-rag: backend/);
    expect(check.hint).toMatch(/newer NVIDIA driver.*native\/scripts\/build-ggml-cuda\.sh/);
  });

  it("kernels - without a CUDA error line the last error-like line is the reason; with none, how the child ended", () => {
    expect(kernelFailure("attr-rag: backend vulkan (--gpu): X\nggml_vulkan: device lost: VK_ERROR_DEVICE_LOST\n/lib/x.so(+0x1)[0x2]\n", null, "SIGABRT")).toEqual({
      error: "ggml_vulkan: device lost: VK_ERROR_DEVICE_LOST",
    });
    expect(kernelFailure("", null, "SIGSEGV")).toEqual({ error: "the check exited with SIGSEGV and said nothing" });
    expect(kernelFailure("CUDA error: out of memory\n  current device: 0, in function alloc\n", 1, null).hint).toMatch(/too little free memory/);
  });

  it("kernels - a child that exits 0 without a result line is a failure, not a pass", async () => {
    const check = await runKernelCheck({ script: fileURLToPath(new URL("./fixtures/silentKernelCheck.mjs", import.meta.url)) });
    expect(check).toEqual({ ok: false, error: "the check printed no result: " });
  });

  it("kernels - a command on a GPU backend stops before any work when the kernels fail, with the error and the fix (exit 2)", async () => {
    const gpu = { backend: "cuda" as const, devices: [{ name: "CUDA0" }] as never };
    const lines: string[] = [];
    const failing = () => runKernelCheck({ script: ABORTING });
    const err = await requireGpuKernels((l) => lines.push(l), failing, gpu).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "CliError", exitCode: 2 });
    expect((err as Error).message).toMatch(/^the cuda backend's kernels do not run on CUDA0: CUDA error: the provided PTX was compiled with an unsupported toolchain\..*build-ggml-cuda\.sh.*; or use --gpu cpu$/);
    await requireGpuKernels((l) => lines.push(l), async () => ({ ok: true, tokens: 4, ms: 1234 }), gpu);
    expect(lines).toEqual(["attr-rag: cuda kernels ran on CUDA0 (4 tokens of the shipped model in 1.2 s)\n"]);
    // The CPU backend runs no check at all.
    await requireGpuKernels((l) => lines.push(l), () => Promise.reject(new Error("must not run")), { backend: "cpu", devices: [] });
    expect(lines).toHaveLength(1);
  });
});
