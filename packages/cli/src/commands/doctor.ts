import type { Command } from "commander";
import { backendSelection, listDevices, llamaBuild, Model, planOffload, readGgufHeader, resolveModel, shippedModelPath, type NativeDevice, type OffloadPlan } from "@attr-rag/engine";
import { CliError } from "../cliError.js";
import { runKernelCheck, type KernelCheck } from "../doctor/kernelCheck.js";
import { addGpuOption, applyGpuOption, type GpuFlags } from "../gpuCli.js";

interface DoctorFlags extends GpuFlags {
  model?: string;
  json?: boolean;
}

export interface DoctorReport {
  backend: string;
  choice: string;
  summary: string;
  software: boolean;
  skipped: string[];
  devices: (Pick<NativeDevice, "name" | "backend" | "description" | "type" | "memoryFree" | "memoryTotal"> & { software: boolean })[];
  llama: { release: string; libraryDir: string; addonPath: string; gpuLibraryDir: string | null };
  model?: { path: string; offloadDevice: string | null } & OffloadPlan;
  /** A GPU backend's kernels, run on its device (absent on the CPU). */
  kernels?: KernelCheck;
  /** Where a generator context reads output rows ("device" picks in the graph, or "host"), and why not on the device. */
  sampling?: { path: "device" | "host"; why: string };
}

const gib = (bytes: number) => (bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`);

/** `attr-rag doctor`: what this machine would run models on, and whether a model would fit there. */
export function registerDoctorCommand(program: Command): void {
  const command = program
    .command("doctor")
    .summary("show the llama.cpp backend in use, its devices and memory, and whether a model would fit a GPU")
    .description(
      [
        "Loads the engine as every command does (the GPU backend chosen by --gpu / ATTR_RAG_GPU: auto takes CUDA, then",
        "Vulkan, when @node-llama-cpp/linux-x64-cuda or -vulkan 3.22.1 is installed and finds a device) and reports the",
        "backend, every device with its memory, the llama.cpp build and the addon's path. With --model it reads the",
        "GGUF header (not the weights) and says whether --gpu-layers -1 would offload every layer to the first GPU",
        "device and how many KV cells would fit beside it (an estimate: 512 MiB are kept for compute buffers).",
        "On a GPU backend it also generates a few tokens of the shipped model with every layer offloaded, in a child",
        "process, since a backend whose kernels cannot run on this GPU aborts at the first decode; that failure,",
        "with what to do about it, is exit 1.",
      ].join("\n"),
    )
    .option("--model <path|name>", "a GGUF to check against the GPU's memory")
    .option("--json", "print the report as JSON");
  addGpuOption(command).action(async (o: DoctorFlags) => {
    applyGpuOption(o);
    const selection = backendSelection();
    const devices = listDevices().map((d) => ({
      name: d.name,
      backend: d.backend,
      description: d.description,
      type: d.type,
      memoryFree: d.memoryFree,
      memoryTotal: d.memoryTotal,
      software: selection.devices.some((s) => s.name === d.name) && selection.software,
    }));
    const build = llamaBuild();
    const report: DoctorReport = {
      backend: selection.backend,
      choice: selection.choice,
      summary: selection.summary,
      software: selection.software,
      skipped: [...selection.skipped],
      devices,
      llama: { ...build, gpuLibraryDir: selection.libraryDir ?? null },
    };
    if (o.model !== undefined) {
      let path: string;
      try {
        path = resolveModel(o.model);
      } catch (err) {
        throw new CliError((err as Error).message, 2, { cause: err });
      }
      const header = await readGgufHeader(path).catch((err: unknown) => {
        throw new CliError(`--model ${o.model}: ${(err as Error).message}`, 2, { cause: err });
      });
      const target = selection.devices[0];
      const plan = planOffload(header, target?.memoryFree ?? 0);
      report.model = { path, offloadDevice: target !== undefined ? target.name : null, ...plan, ...(target === undefined ? { fits: false, cellsThatFit: 0 } : {}) };
    }
    if (selection.backend !== "cpu") report.kernels = await runKernelCheck();
    if (report.kernels?.ok === false) process.exitCode = 1;
    // Where a generator context reads its output rows (ContextOptions.sampling): on a GPU the kernel check's
    // context says; on the CPU a context of the shipped model, here.
    if (report.kernels?.sampling !== undefined) {
      report.sampling = { path: report.kernels.sampling, why: report.kernels.samplingWhy ?? "" };
    } else if (selection.backend === "cpu") {
      const model = await Model.load(shippedModelPath(), { gpuLayers: 0 });
      try {
        const ctx = await model.createContext({ contextSize: 256, sequences: 1 });
        report.sampling = { path: ctx.info.sampling, why: ctx.info.samplingWhy };
      } finally {
        await model.dispose();
      }
    }
    if (o.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return;
    }
    const lines = [report.summary, "devices:"];
    for (const d of devices) lines.push(`  ${d.name} (${d.backend}, ${d.type}${d.software ? ", software renderer" : ""}): ${d.description}; ${gib(d.memoryFree)} free of ${gib(d.memoryTotal)}`);
    lines.push(`llama.cpp: ${build.release || "(built from source)"}; libraries ${build.libraryDir}${selection.libraryDir ? `; GPU backend from ${selection.libraryDir}` : ""}`);
    lines.push(`addon: ${build.addonPath}`);
    if (report.model !== undefined) {
      const m = report.model;
      lines.push(`model: ${m.path} (${m.architecture}, ${m.layers} layers, ${gib(m.modelBytes)}, ${(m.kvBytesPerCell / 1024).toFixed(1)} KiB of f16 KV per cell)`);
      lines.push(
        m.offloadDevice === null
          ? "  --gpu-layers -1: no GPU device in use; every layer stays on the CPU"
          : m.fits
            ? `  --gpu-layers -1: every layer fits ${m.offloadDevice}; about ${m.cellsThatFit.toLocaleString("en-US")} KV cells fit beside it`
            : `  --gpu-layers -1: does not fit ${m.offloadDevice} (${gib(m.modelBytes)} of weights, ${gib(selection.devices[0]!.memoryFree)} free); offload fewer layers`,
      );
    }
    const k = report.kernels;
    if (k?.ok === true) lines.push(`kernels: ran on ${selection.devices[0]?.name ?? selection.backend} (${k.tokens} tokens of the shipped model, every layer offloaded, ${((k.ms ?? 0) / 1000).toFixed(1)} s)`);
    if (k?.ok === false) lines.push(`kernels: FAILED on ${selection.devices[0]?.name ?? selection.backend}: ${k.error}`, ...(k.hint ? [`  fix: ${k.hint}`] : []));
    const s = report.sampling;
    if (s !== undefined) {
      lines.push(
        s.path === "device"
          ? `output rows: picked on ${selection.backend === "cpu" ? "the CPU backend" : (selection.devices[0]?.name ?? selection.backend)} inside the decode graph (greedy token, margin, log-probabilities: 24 bytes a row to the host)`
          : `output rows: whole logits rows scanned on the host${s.why ? ` (${s.why})` : ""}`,
      );
    }
    process.stdout.write(`${lines.join("\n")}\n`);
  });
}
