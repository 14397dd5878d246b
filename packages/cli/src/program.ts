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
import { registerSoakCommand } from "./commands/soak.js";
import { requireGpuKernels } from "./doctor/requireGpuKernels.js";
import { addLogOptions, addMetricsOptions, applyLogOptions, ROLE_COMMANDS, startRoleTelemetry, type RoleTelemetry, type TelemetryFlags } from "./telemetryCli.js";
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
  addLogOptions(program);
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
  registerSoakCommand(program);
  // --gpu on every command that runs models here; it becomes ATTR_RAG_GPU before the engine starts.
  const modelCommands = new Set<Command>();
  for (const path of ["serve", "worker", "ask", "attribute", "demo", "bench occlusion", "bench throughput", "bench attribution"]) {
    let command: Command | undefined = program;
    for (const name of path.split(" ")) command = command?.commands.find((c) => c.name() === name);
    if (command === undefined) throw new Error(`no command ${path} to add --gpu to`);
    addGpuOption(command);
    modelCommands.add(command);
  }
  // --metrics-port on the long-running roles; their metrics port and trace export live as long as the action.
  const roles = new Map<Command, string>();
  for (const [path, service] of Object.entries(ROLE_COMMANDS)) {
    let command: Command | undefined = program;
    for (const name of path.split(" ")) command = command?.commands.find((c) => c.name() === name);
    if (command === undefined) throw new Error(`no command ${path} to add --metrics-port to`);
    addMetricsOptions(command);
    roles.set(command, service);
  }
  const running = new Map<Command, RoleTelemetry>();
  program.hook("preAction", async (_program, action) => {
    applyLogOptions(program.opts());
    const service = roles.get(action);
    if (service !== undefined) running.set(action, await startRoleTelemetry(service, action.opts() as TelemetryFlags));
    applyGpuOption(action.opts() as GpuFlags);
    // Only where a GPU was asked for or found: a CPU-only run never loads the engine here.
    if (modelCommands.has(action) && gpuMayBeInUse()) await requireGpuKernels();
  });
  program.hook("postAction", async (_program, action) => {
    await running.get(action)?.stop();
    running.delete(action);
  });
  return program;
}
