import type { handleUnaryCall } from "@grpc/grpc-js";
import { callSignal } from "./callSignal.js";
import type { ServiceContext } from "./context.js";
import { toGrpcStatus } from "./toGrpcStatus.js";

/**
 * Adapts `run(request, signal)` to a grpc-js unary handler: errors (and a cancelled or expired call) go
 * through toGrpcStatus, the one error path of the service.
 */
export function unaryHandler<Req, Res>(
  ctx: Pick<ServiceContext, "log">,
  rpc: string,
  run: (request: Req, signal: AbortSignal) => Promise<Res> | Res,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const abort = callSignal(call);
    void (async () => {
      try {
        const response = await run(call.request, abort.signal);
        abort.signal.throwIfAborted();
        callback(null, response);
      } catch (err) {
        callback(toGrpcStatus(abort.signal.aborted ? abort.signal.reason : err, rpc, ctx.log));
      } finally {
        abort.dispose();
      }
    })();
  };
}
