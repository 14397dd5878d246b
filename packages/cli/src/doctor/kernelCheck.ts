// Whether the GPU backend's kernels run on this GPU. Loading a backend and listing its devices runs no kernel,
// so a backend built for other GPUs, or with a toolchain newer than the driver, looks healthy until the first
// decode, where ggml aborts the whole process. doctor therefore generates a few tokens in a child process and
// reports what killed it.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface KernelCheck {
  ok: boolean;
  /** Tokens generated with every layer offloaded (when ok). */
  tokens?: number;
  /** Load, context and generation, in the child (when ok). */
  ms?: number;
  /** Where the context read output rows, and why a device request ran on the host path ("" when it did not). */
  sampling?: "device" | "host";
  samplingWhy?: string;
  /** What failed, from the child's stderr (when not ok). */
  error?: string;
  /** What to do about it (when known). */
  hint?: string;
}

const CHILD = fileURLToPath(new URL("./kernelCheckChild.js", import.meta.url));
const TIMEOUT_MS = 180_000;

/** Known failures of prebuilt GPU backends, and the fix for each. */
const HINTS: readonly [RegExp, string][] = [
  [
    /PTX was compiled with an unsupported toolchain|no kernel image is available|unsupported PTX version/i,
    "this libggml-cuda.so has no machine code for this GPU and PTX the driver cannot compile: install a newer NVIDIA driver, or build the backend for this GPU with native/scripts/build-ggml-cuda.sh (see docs/engine.md, GPU backends)",
  ],
  [/out of memory/i, "the GPU has too little free memory for even the smallest model: free it (nvidia-smi shows who holds it) or use --gpu cpu"],
];

/** The error in a failed child's stderr: ggml's own message lines, not the backtrace or our progress lines. */
export function kernelFailure(stderr: string, code: number | null, signal: NodeJS.Signals | null): { error: string; hint?: string } {
  const lines = stderr.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const cuda = lines.findIndex((l) => /^CUDA error: /.test(l));
  const picked =
    cuda >= 0
      ? lines.slice(cuda, cuda + 2).filter((l) => !/^\//.test(l)).join("; ")
      : (lines.filter((l) => !/^\/|^attr-rag: backend|^\{"level":|^\[|^\s*at /.test(l) && /error|abort|assert|fail/i.test(l)).slice(-2).join("; ") ||
        `the check exited with ${signal ?? `code ${code}`} and said nothing`);
  const hint = HINTS.find(([re]) => re.test(picked))?.[1];
  return hint ? { error: picked, hint } : { error: picked };
}

/** Runs the check in a child with the same backend choice; `script` replaces the child (tests). */
export function runKernelCheck(options: { script?: string; env?: NodeJS.ProcessEnv } = {}): Promise<KernelCheck> {
  return new Promise((resolve) => {
    // The child's llama.cpp log is on (errors only) so a CUDA error names itself before ggml aborts.
    const env = { ...process.env, ATTR_RAG_GPU_LAYERS: "-1", ATTR_RAG_LLAMA_LOG: "4", ...options.env };
    const child = spawn(process.execPath, [options.script ?? CHILD], { stdio: ["ignore", "pipe", "pipe"], env });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS);
    child.on("error", (err) => {
      clearTimeout(timer);
      resolve({ ok: false, error: `could not start the check: ${err.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        try {
          const { tokens, ms, sampling, samplingWhy } = JSON.parse(stdout.trim().split("\n").pop() ?? "") as Required<Pick<KernelCheck, "tokens" | "ms" | "sampling" | "samplingWhy">>;
          resolve({ ok: true, tokens, ms, ...(sampling !== undefined ? { sampling, samplingWhy } : {}) });
          return;
        } catch {
          resolve({ ok: false, error: `the check printed no result: ${stdout.slice(0, 200)}` });
          return;
        }
      }
      if (signal === "SIGKILL") {
        resolve({ ok: false, error: `no result within ${TIMEOUT_MS / 1000} s (a first run may be compiling PTX for this GPU; run doctor again)` });
        return;
      }
      resolve({ ok: false, ...kernelFailure(stderr, code, signal) });
    });
  });
}
