import { randomUUID } from "node:crypto";
import { status, type StatusObject } from "@grpc/grpc-js";
import {
  DocumentNotFoundError,
  DocumentReadError,
  EmbedderMismatchError,
  StoreConfigMismatchError,
  InvalidDocumentError,
  InvalidQueryError,
  StoreClosedError,
  StoreLockedError,
  StoreNotFoundError,
  VectorsIncompleteError,
} from "../errors.js";
import { lineLog } from "@attr-rag/telemetry";
import { ServiceError } from "./ServiceError.js";

/** Where the service writes what it does not tell clients (unexpected errors). One line per call. */
export type ServiceLog = (line: string) => void;

/** The default: the process's log (one JSON line per event, or a readable line on a terminal). */
export const stderrLog: ServiceLog = lineLog("index");

export type GrpcStatus = Pick<StatusObject, "code" | "details">;

/**
 * The one place errors become gRPC statuses. Known errors keep their message (it says what to fix);
 * anything else is INTERNAL with a generic message and a reference, while the real error, stack
 * included, goes to `log` under the same reference.
 */
export function toGrpcStatus(err: unknown, rpc: string, log: ServiceLog = stderrLog): GrpcStatus {
  const code = knownCode(err);
  if (code !== undefined) return { code, details: (err as Error).message };
  const ref = randomUUID().slice(0, 8);
  const detail = err instanceof Error ? (err.stack ?? `${err.name}: ${err.message}`) : String(err);
  log(`index service: ${rpc} failed unexpectedly (ref ${ref}): ${detail}${causeChain(err)}`);
  return { code: status.INTERNAL, details: `internal error in ${rpc} (ref ${ref}); the server log has the details` };
}

function knownCode(err: unknown): status | undefined {
  if (err instanceof ServiceError) return err.code;
  if (err instanceof InvalidQueryError || err instanceof InvalidDocumentError || err instanceof DocumentReadError) return status.INVALID_ARGUMENT;
  if (err instanceof DocumentNotFoundError || err instanceof StoreNotFoundError) return status.NOT_FOUND;
  if (err instanceof EmbedderMismatchError || err instanceof StoreConfigMismatchError || err instanceof VectorsIncompleteError) return status.FAILED_PRECONDITION;
  if (err instanceof StoreClosedError || err instanceof StoreLockedError) return status.UNAVAILABLE;
  if (err instanceof Error && err.name === "AbortError") return status.CANCELLED;
  if (err instanceof Error && err.name === "TimeoutError") return status.DEADLINE_EXCEEDED;
  return undefined;
}

function causeChain(err: unknown): string {
  let out = "";
  for (let cause = (err as Error | undefined)?.cause, depth = 0; cause !== undefined && depth < 5; cause = (cause as Error).cause, depth++) {
    out += `\n  caused by: ${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}`;
  }
  return out;
}
