/**
 * An error the user can fix (bad input or usage, or work that failed for a reason the message names): the
 * command line prints it as one line, without a stack, and exits with `exitCode`. The harnesses below the
 * command line (eval, bench) throw it too, so their errors read the same whoever calls them.
 */
export class InputError extends Error {
  override readonly name: string = "InputError";
  constructor(
    message: string,
    /** 2 = bad input or usage (as commander uses), 1 = the work itself failed, 130 = interrupted. */
    readonly exitCode: number = 2,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
