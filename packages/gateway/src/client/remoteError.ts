import { status } from "@grpc/grpc-js";
import { InputError } from "@attr-rag/core";

/** Statuses the caller fixes by changing the request (exit 2 on the command line); the rest are failures (1). */
export const USAGE_CODES = new Set<number>([status.INVALID_ARGUMENT, status.NOT_FOUND, status.ALREADY_EXISTS, status.UNAUTHENTICATED, status.OUT_OF_RANGE, status.UNIMPLEMENTED]);

/** A gRPC status from a remote gateway as an error naming the code. */
export function remoteError(err: { code?: number; details?: string; message?: string }): InputError {
  const name = err.code !== undefined ? (status[err.code] ?? String(err.code)) : "UNKNOWN";
  return new InputError(`server: ${name}: ${err.details ?? err.message ?? ""}`, err.code !== undefined && USAGE_CODES.has(err.code) ? 2 : 1, { cause: err });
}
