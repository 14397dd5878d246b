// What a benchmark number needs beside it to be trusted later: the exact command, the commit it ran at (and
// whether the tree had uncommitted changes), when, and on what machine. Every `attr-rag bench … --json`
// report carries it as `run`, and bench/results/ keeps those reports as the README's sources.
import { backendSelection, listDevices } from "@attr-rag/engine";
import { cpus, release, totalmem } from "node:os";
import { gitState } from "./gitState.js";

export interface BenchRun {
  command: string;
  commit: string | null;
  /** Uncommitted changes to tracked files when it ran (null: not a git checkout). */
  dirty: boolean | null;
  date: string;
  machine: { cpu: string; cores: number; memory_gib: number; os: string; node: string; devices: string[] };
  /**
   * What ran the model: "cpu", "cuda" or "vulkan", its devices, and a label a reader cannot miss when the
   * device is a software renderer ("software Vulkan, not a GPU": lavapipe runs Vulkan on the CPU).
   */
  backend?: { name: string; devices: string[]; gpu_layers: number; label: string };
}

/** `program` names what was run (argv[2…] follow it): "attr-rag", or "node packages/bench/scripts/index-bench.mjs". */
export function describeRun(argv: readonly string[] = process.argv, program = "attr-rag"): BenchRun {
  const { commit, dirty } = gitState(import.meta.dirname);
  const cpu = cpus();
  let devices: string[] = [];
  let backend: BenchRun["backend"];
  try {
    devices = listDevices().map((d) => `${d.type}:${d.description || d.name}`);
    const s = backendSelection();
    const gpuLayers = Number(process.env.ATTR_RAG_GPU_LAYERS ?? 0);
    backend = {
      name: s.backend,
      devices: s.devices.map((d) => d.description || d.name),
      gpu_layers: Number.isFinite(gpuLayers) ? gpuLayers : 0,
      label: s.backend === "cpu" ? "CPU" : s.software ? `software ${s.backend === "vulkan" ? "Vulkan" : s.backend}, not a GPU` : `GPU (${s.backend})`,
    };
  } catch {
    // The addon is checked when the bench loads its model; a description without devices is still useful.
  }
  return {
    command: [program, ...argv.slice(2).map(quote)].join(" "),
    commit,
    dirty,
    date: new Date().toISOString(),
    machine: {
      cpu: cpu[0]?.model.trim() ?? "unknown",
      cores: cpu.length,
      memory_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
      os: `${process.platform} ${release()}`,
      node: process.version,
      devices,
    },
    ...(backend !== undefined ? { backend } : {}),
  };
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
