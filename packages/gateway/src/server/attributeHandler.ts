import type { handleUnaryCall } from "@grpc/grpc-js";
import type { AttributeRequest, AttributeResponse } from "@attr-rag/contracts";
import { callSignal } from "@attr-rag/index";
import { prepareAttribute, runAttribute } from "../pipeline/runAttribute.js";
import { admitted } from "./admitted.js";
import type { ServerContext } from "./serverContext.js";
import { toStatus } from "./toStatus.js";

/** AttrRagService.Attribute: the same admission queue as Ask (both run the engine). */
export function attributeHandler(ctx: ServerContext): handleUnaryCall<AttributeRequest, AttributeResponse> {
  return (call, callback) => {
    const abort = callSignal(call);
    const { runtime } = ctx;
    admitted(ctx, "Attribute", call.metadata, abort.signal, () => prepareAttribute(call.request, runtime.config), (input) => runAttribute(runtime, input, abort.signal))
      .then((response) => {
        abort.signal.throwIfAborted();
        callback(null, response);
      })
      .catch((err: unknown) => callback(toStatus(abort.signal.aborted ? abort.signal.reason : err, "Attribute", ctx.log)))
      .finally(() => abort.dispose());
  };
}
