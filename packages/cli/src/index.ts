export { createProgram, VERSION } from "./program.js";
export { CliError } from "./cliError.js";
