import { ServerInterceptingCall, status, type ServerInterceptor } from "@grpc/grpc-js";
import { bearerRefusal } from "./auth.js";

/** Our services need the token; health and reflection (probed by load balancers and grpcurl) do not. */
const GUARDED_PREFIX = "/attr_rag.v1.";

/**
 * Checks the bearer token on a call's metadata, before grpc-js reads its first message: an unauthenticated
 * CreateBatch of 60 MiB ends UNAUTHENTICATED having cost the gateway one HTTP/2 flow-control window, not the
 * whole message (the handlers' own check, withBearer, runs only once the message is in memory).
 */
export function bearerInterceptor(token: string | undefined): ServerInterceptor {
  return (method, call) =>
    new ServerInterceptingCall(call, {
      start: (next) =>
        next({
          onReceiveMetadata: (metadata, forward) => {
            const refusal = token !== undefined && method.path.startsWith(GUARDED_PREFIX) ? bearerRefusal(metadata.get("authorization")[0], token, "metadata") : undefined;
            if (refusal === undefined) forward(metadata);
            else call.sendStatus({ code: status.UNAUTHENTICATED, details: refusal });
          },
        }),
    });
}
