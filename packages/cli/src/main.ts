#!/usr/bin/env node
import { CommanderError } from "commander";
import { EngineError, GpuBackendError } from "@attr-rag/engine";
import { createProgram } from "./program.js";
import { InputError } from "@attr-rag/core";

try {
  await createProgram().parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // commander already printed its message (or the help/version text).
    process.exitCode = err.exitCode === 1 && err.code !== "commander.helpDisplayed" ? 2 : err.exitCode;
  } else if (err instanceof InputError) {
    process.stderr.write(`attr-rag: error: ${err.message}\n`);
    process.exitCode = err.exitCode;
  } else if (err instanceof GpuBackendError) {
    // The GPU asked for is not usable here: a setup problem the message names, like a bad flag.
    process.stderr.write(`attr-rag: ${err.name}: ${err.message}\n`);
    process.exitCode = 2;
  } else if (err instanceof EngineError) {
    // Engine errors already say what went wrong and what to do; a stack would only bury that.
    process.stderr.write(`attr-rag: ${err.name}: ${err.message}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`attr-rag: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
}
