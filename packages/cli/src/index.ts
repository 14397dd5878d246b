export { createProgram, VERSION } from "./program.js";
export { CliError } from "./cliError.js";
export { describeRun, type BenchRun } from "./benchRun.js";
export { scoreMetricLines } from "./commands/metrics.js";
