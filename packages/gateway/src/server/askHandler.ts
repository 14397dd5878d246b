import type { handleServerStreamingCall } from "@grpc/grpc-js";
import type { AskRequest, AskResponse } from "@attr-rag/contracts";
import { callSignal } from "@attr-rag/index";
import { runAsk } from "../pipeline/runAsk.js";
import { checkBearer } from "./auth.js";
import type { ServerContext } from "./serverContext.js";
import { toStatus } from "./toStatus.js";

/**
 * AttrRagService.Ask: admission (bounded queue), then the pipeline, one message per event. A cancel or an
 * expired deadline aborts the pipeline's signal, which stops the engine job and frees its KV at once.
 */
export function askHandler(ctx: ServerContext): handleServerStreamingCall<AskRequest, AskResponse> {
  return (call) => {
    const abort = callSignal(call);
    void (async () => {
      let release: (() => void) | undefined;
      try {
        checkBearer(call.metadata, ctx.runtime.config.authToken);
        release = await ctx.admission.acquire(abort.signal);
        await runAsk(
          ctx.runtime,
          call.request,
          (event) => {
            if (!abort.signal.aborted) call.write({ event });
          },
          abort.signal,
        );
        abort.signal.throwIfAborted();
        call.end();
      } catch (err) {
        call.emit("error", toStatus(abort.signal.aborted ? abort.signal.reason : err, "Ask", ctx.log));
      } finally {
        release?.();
        abort.dispose();
      }
    })();
  };
}
