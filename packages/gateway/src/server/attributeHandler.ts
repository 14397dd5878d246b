import type { handleUnaryCall } from "@grpc/grpc-js";
import type { AttributeRequest, AttributeResponse } from "@attr-rag/contracts";
import { callSignal } from "@attr-rag/index";
import { runAttribute } from "../pipeline/runAttribute.js";
import { checkBearer } from "./auth.js";
import type { ServerContext } from "./serverContext.js";
import { toStatus } from "./toStatus.js";

/** AttrRagService.Attribute: the same admission queue as Ask (both run the engine). */
export function attributeHandler(ctx: ServerContext): handleUnaryCall<AttributeRequest, AttributeResponse> {
  return (call, callback) => {
    const abort = callSignal(call);
    void (async () => {
      let release: (() => void) | undefined;
      try {
        checkBearer(call.metadata, ctx.runtime.config.authToken);
        release = await ctx.admission.acquire(abort.signal);
        const response = await runAttribute(ctx.runtime, call.request, abort.signal);
        abort.signal.throwIfAborted();
        callback(null, response);
      } catch (err) {
        callback(toStatus(abort.signal.aborted ? abort.signal.reason : err, "Attribute", ctx.log));
      } finally {
        release?.();
        abort.dispose();
      }
    })();
  };
}
