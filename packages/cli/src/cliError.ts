import { InputError } from "@attr-rag/core";

/** An error the user can fix: printed as one line (no stack) and mapped to an exit code. */
export class CliError extends InputError {
  override readonly name = "CliError";
}
