import { Command } from "commander";
import { registerMetricsCommand } from "./commands/metrics.js";
import { registerModelsCommand } from "./commands/models.js";
import { registerBenchCommand } from "./commands/bench.js";
import { registerIngestCommand } from "./commands/ingest.js";
import { registerSearchCommand } from "./commands/search.js";
import { registerEvalCommand } from "./commands/eval.js";
import { registerIndexServeCommand } from "./commands/indexServe.js";
import { registerIndexSnapshotCommand } from "./commands/indexSnapshot.js";
import { registerAskCommand } from "./commands/ask.js";
import { registerAttributeCommand } from "./commands/attribute.js";
import { registerServeCommand } from "./commands/serve.js";
import { registerDemoCommand } from "./commands/demo.js";
import { registerSelectorCommand } from "./commands/selector.js";
import { registerWorkerCommand } from "./commands/worker.js";
import { registerClusterCommand } from "./commands/cluster.js";
import { registerBatchCommand } from "./commands/batch.js";
import { registerDoctorCommand } from "./commands/doctor.js";
import { requireGpuKernels } from "./doctor/requireGpuKernels.js";
import { addGpuOption, applyGpuOption, gpuMayBeInUse, type GpuFlags } from "./gpuCli.js";

export const VERSION = "0.1.0";

/** The `attr-rag` command tree; each command lives in commands/<name>.ts. */
export function createProgram(): Command {
  const program = new Command("attr-rag")
    .description("Attribution-guided RAG: answers step-by-step questions from your documents and shows which passages shaped the answer.")
    .version(VERSION)
    .showHelpAfterError("(add --help for usage)")
    // Set before adding commands: subcommands copy these settings when they are created.
    .exitOverride();
  registerMetricsCommand(program);
  registerModelsCommand(program);
  registerBenchCommand(program);
  registerIngestCommand(program);
  registerSearchCommand(program);
  registerEvalCommand(program);
  registerIndexServeCommand(program);
  registerIndexSnapshotCommand(program);
  registerAskCommand(program);
  registerAttributeCommand(program);
  registerServeCommand(program);
  registerDemoCommand(program);
  registerWorkerCommand(program);
  registerSelectorCommand(program);
  registerClusterCommand(program);
  registerBatchCommand(program);
  registerDoctorCommand(program);
  // --gpu on every command that runs models here; it becomes ATTR_RAG_GPU before the engine starts.
  const modelCommands = new Set<Command>();
  for (const path of ["serve", "worker", "ask", "attribute", "demo", "bench occlusion", "bench throughput", "bench attribution"]) {
    let command: Command | undefined = program;
    for (const name of path.split(" ")) command = command?.commands.find((c) => c.name() === name);
    if (command === undefined) throw new Error(`no command ${path} to add --gpu to`);
    addGpuOption(command);
    modelCommands.add(command);
  }
  program.hook("preAction", async (_program, action) => {
    applyGpuOption(action.opts() as GpuFlags);
    // Only where a GPU was asked for or found: a CPU-only run never loads the engine here.
    if (modelCommands.has(action) && gpuMayBeInUse()) await requireGpuKernels();
  });
  return program;
}
