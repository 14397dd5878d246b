/** An error the user can fix: printed as one line (no stack) and mapped to an exit code. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    /** 2 = bad input or usage (as commander uses), 1 = the work itself failed. */
    readonly exitCode: number = 2,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
