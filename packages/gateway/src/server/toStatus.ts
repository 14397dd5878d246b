import { status } from "@grpc/grpc-js";
import { DisposedError, EngineArgumentError, EngineLimitError, ModelLoadError } from "@attr-rag/engine";
import { toGrpcStatus, type GrpcStatus, type ServiceLog } from "@attr-rag/index";

/**
 * The gateway's one error-to-status mapping: engine errors get their codes here, everything else goes
 * through the index service's mapping (store errors, ServiceError, aborts; unexpected → INTERNAL + log).
 */
export function toStatus(err: unknown, rpc: string, log: ServiceLog): GrpcStatus {
  if (err instanceof EngineArgumentError) return { code: status.INVALID_ARGUMENT, details: err.message };
  if (err instanceof EngineLimitError) return { code: status.RESOURCE_EXHAUSTED, details: err.message };
  if (err instanceof ModelLoadError) return { code: status.FAILED_PRECONDITION, details: err.message };
  if (err instanceof DisposedError) return { code: status.UNAVAILABLE, details: "the server is shutting down; retry on another instance" };
  return toGrpcStatus(err, rpc, log);
}
