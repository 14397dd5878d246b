import { JobErrorCode, type JobError } from "@attr-rag/contracts";
import { EngineArgumentError, EngineLimitError } from "@attr-rag/engine";

/**
 * A job that cannot be done, with the cause a caller can act on: thrown by the job runners in-process and
 * carried as JobError in a result over NATS, so both transports fail the same way with the same message.
 */
export class JobFailure extends Error {
  override name = "JobFailure";
  constructor(
    readonly code: JobErrorCode,
    message: string,
    readonly retryable = false,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  toProto(): JobError {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }

  static fromProto(error: JobError): JobFailure {
    return new JobFailure(error.code, error.message, error.retryable);
  }
}

export const invalidJob = (message: string) => new JobFailure(JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT, message);
export const jobTooLarge = (message: string) => new JobFailure(JobErrorCode.JOB_ERROR_CODE_RESOURCE_EXHAUSTED, message);

/**
 * An engine call's failure as the job's: the engine checks every job against its limits before touching
 * llama.cpp, so its argument and limit errors are the caller's to fix, answered and never retried; anything
 * else is rethrown as it is.
 */
export function engineFailure(err: unknown): unknown {
  if (err instanceof EngineArgumentError) return invalidJob(err.message);
  if (err instanceof EngineLimitError) return jobTooLarge(err.message);
  return err;
}
