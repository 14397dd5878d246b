// Engine jobs as the pipeline runs them: a fresh job id each, progress forwarded once per sequence number
// (a redelivered job streams its progress again from the start), and a failed job as the precise status.
import { randomUUID } from "node:crypto";
import { status } from "@grpc/grpc-js";
import { JobErrorCode, type JobProgress } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import { RemoteError } from "@attr-rag/nats";
import { JobFailure } from "@attr-rag/worker";

/** A job id: unique, a NATS subject token, and the JetStream de-duplication key of the job. */
export function newJobId(kind: "occ" | "gen" | "lik" | "rrk"): string {
  return `${kind}-${randomUUID()}`;
}

/** Wraps a progress handler so each progress sequence number reaches it once, in order. */
export function onceBySequence(handle: (progress: JobProgress) => void): (progress: JobProgress) => void {
  let next = 0;
  return (progress) => {
    if (progress.sequence < next) return;
    next = progress.sequence + 1;
    handle(progress);
  };
}

const STATUS: Record<JobErrorCode, status> = {
  [JobErrorCode.JOB_ERROR_CODE_UNSPECIFIED]: status.INTERNAL,
  [JobErrorCode.JOB_ERROR_CODE_INVALID_ARGUMENT]: status.INVALID_ARGUMENT,
  [JobErrorCode.JOB_ERROR_CODE_DEADLINE_EXCEEDED]: status.DEADLINE_EXCEEDED,
  [JobErrorCode.JOB_ERROR_CODE_MODEL_MISMATCH]: status.FAILED_PRECONDITION,
  [JobErrorCode.JOB_ERROR_CODE_RESOURCE_EXHAUSTED]: status.RESOURCE_EXHAUSTED,
  [JobErrorCode.JOB_ERROR_CODE_CANCELLED]: status.CANCELLED,
  [JobErrorCode.JOB_ERROR_CODE_INTERNAL]: status.INTERNAL,
  [JobErrorCode.UNRECOGNIZED]: status.INTERNAL,
};

/** Runs an engine call; a failed job (or an unreachable queue) becomes the ServiceError the client sees. */
export async function engineCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof JobFailure) throw new ServiceError(STATUS[err.code] ?? status.INTERNAL, err.message, { cause: err });
    if (err instanceof RemoteError) throw new ServiceError(err.code, err.message, { cause: err });
    throw err;
  }
}
