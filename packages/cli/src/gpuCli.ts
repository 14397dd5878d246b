import type { Command } from "commander";
import { backendSelection, GPU_CHOICES, parseGpuChoice } from "@attr-rag/engine";

export interface GpuFlags {
  gpu?: string;
}

/** --gpu on the commands that run models (serve, worker, ask, bench, doctor). */
export function addGpuOption(command: Command): Command {
  return command.option("--gpu <backend>", `llama.cpp backend: ${GPU_CHOICES.join(" | ")} (default: $ATTR_RAG_GPU, else auto)`);
}

/**
 * Makes --gpu the process's ATTR_RAG_GPU before the engine starts (it chooses its backend once, on first
 * use). A bad value is a usage error (exit 2); an unusable GPU fails when the engine starts (GpuBackendError,
 * exit 2).
 */
export function applyGpuOption(o: GpuFlags): void {
  if (o.gpu === undefined) return;
  const choice = parseGpuChoice(o.gpu, "--gpu");
  process.env.ATTR_RAG_GPU = choice;
  // Naming a GPU means running on it: every layer offloaded unless the layers were chosen (--gpu-layers or
  // ATTR_RAG_GPU_LAYERS, which the gateway's gpuLayers setting also reads).
  if ((choice === "cuda" || choice === "vulkan") && process.env.ATTR_RAG_GPU_LAYERS === undefined) process.env.ATTR_RAG_GPU_LAYERS = "-1";
  // A GPU named outright is checked now, before any other work: it fails at once if it cannot be used.
  if (choice === "cuda" || choice === "vulkan") backendSelection();
}

/**
 * A GPU backend was asked for by name (--gpu or ATTR_RAG_GPU cuda|vulkan, as GPU deployments set it): its
 * kernels are worth checking before any work. `auto` is left alone (on a machine without a GPU it would load
 * the engine for nothing); `attr-rag doctor` checks it.
 */
export function gpuMayBeInUse(): boolean {
  const v = (process.env.ATTR_RAG_GPU ?? "").trim().toLowerCase();
  return v === "cuda" || v === "vulkan";
}
