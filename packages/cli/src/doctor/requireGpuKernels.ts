// Before a command runs models on a GPU backend, its kernels are run once in a child process (kernelCheck.ts):
// a backend that cannot run on this GPU would otherwise abort the process at the first decode, mid-Ask or in a
// crash-looping worker, with nothing but ggml's backtrace to go on.
import { backendSelection, type BackendSelection } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { runKernelCheck, type KernelCheck } from "./kernelCheck.js";

/**
 * Nothing on the CPU backend. On a GPU backend: one stderr line when its kernels ran, else a CliError (exit 2)
 * with the error and the fix. `check` and `selection` stand in for the child process and the engine (tests).
 */
export async function requireGpuKernels(
  write: (line: string) => void = (l) => process.stderr.write(l),
  check: () => Promise<KernelCheck> = runKernelCheck,
  selection: Pick<BackendSelection, "backend" | "devices"> = backendSelection(),
): Promise<void> {
  if (selection.backend === "cpu") return;
  const device = selection.devices[0]?.name ?? selection.backend;
  const k = await check();
  if (k.ok) {
    write(`attr-rag: ${selection.backend} kernels ran on ${device} (${k.tokens} tokens of the shipped model in ${((k.ms ?? 0) / 1000).toFixed(1)} s)\n`);
    return;
  }
  throw new CliError(`the ${selection.backend} backend's kernels do not run on ${device}: ${k.error}${k.hint ? `; ${k.hint}` : ""}; or use --gpu cpu`, 2);
}
