import type { handleServerStreamingCall, handleUnaryCall, Metadata } from "@grpc/grpc-js";
import { callSignal, type ServiceLog } from "@attr-rag/index";
import { toStatus } from "../toStatus.js";

/** A unary RPC (BatchService, ClusterService): errors (and a cancelled or expired call) through the gateway's one status mapping. */
export function unaryBatchCall<Req, Res>(log: ServiceLog, rpc: string, run: (request: Req, signal: AbortSignal, metadata: Metadata) => Promise<Res>): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const abort = callSignal(call);
    run(call.request, abort.signal, call.metadata)
      .then((response) => {
        abort.signal.throwIfAborted();
        callback(null, response);
      })
      .catch((err: unknown) => callback(toStatus(abort.signal.aborted ? abort.signal.reason : err, rpc, log)))
      .finally(() => abort.dispose());
  };
}

/**
 * A server-streaming BatchService RPC: `run` writes messages until it returns; the call then ends. `write`
 * waits while the client reads slower than we send (10,000 results must not pile up in memory).
 */
export function streamingBatchCall<Req, Res>(
  log: ServiceLog,
  rpc: string,
  run: (request: Req, write: (message: Res) => Promise<void>, signal: AbortSignal) => Promise<void>,
): handleServerStreamingCall<Req, Res> {
  return (call) => {
    const abort = callSignal(call);
    const write = async (message: Res): Promise<void> => {
      if (abort.signal.aborted || call.write(message)) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          call.off("drain", done);
          abort.signal.removeEventListener("abort", done);
          resolve();
        };
        call.once("drain", done);
        abort.signal.addEventListener("abort", done, { once: true });
      });
    };
    run(call.request, write, abort.signal)
      .then(() => {
        abort.signal.throwIfAborted();
        call.end();
      })
      .catch((err: unknown) => call.emit("error", toStatus(abort.signal.aborted ? abort.signal.reason : err, rpc, log)))
      .finally(() => abort.dispose());
  };
}
