import type { handleServerStreamingCall } from "@grpc/grpc-js";
import type { AskRequest, AskResponse } from "@attr-rag/contracts";
import { callSignal } from "@attr-rag/index";
import { resolveAsk } from "../pipeline/resolveAsk.js";
import { runAsk } from "../pipeline/runAsk.js";
import { admitted } from "./admitted.js";
import type { ServerContext } from "./serverContext.js";
import { toStatus } from "./toStatus.js";

/**
 * AttrRagService.Ask: admission (bounded queue), then the pipeline, one message per event. A cancel or an
 * expired deadline aborts the pipeline's signal, which stops the engine job and frees its KV at once.
 */
export function askHandler(ctx: ServerContext): handleServerStreamingCall<AskRequest, AskResponse> {
  return (call) => {
    const abort = callSignal(call);
    const write = (event: AskResponse["event"]) => {
      if (!abort.signal.aborted) call.write({ event });
    };
    const acceptedAt = performance.now();
    const { runtime } = ctx;
    admitted(ctx, "Ask", call.metadata, abort.signal, () => resolveAsk(call.request, runtime.config), () => runAsk(runtime, call.request, write, abort.signal, acceptedAt))
      .then(() => {
        abort.signal.throwIfAborted();
        call.end();
      })
      .catch((err: unknown) => call.emit("error", toStatus(abort.signal.aborted ? abort.signal.reason : err, "Ask", ctx.log)))
      .finally(() => abort.dispose());
  };
}
