import { ServerInterceptingCall, type ServerInterceptor } from "@grpc/grpc-js";
import { recordRequest } from "./requestMetrics.js";

/**
 * Counts every gRPC call a server answers (attr_rag_requests_total, transport "grpc") with the status it ended
 * with, UNAUTHENTICATED refusals and health probes included: it sees the status as it is sent.
 */
export function grpcMetricsInterceptor(): ServerInterceptor {
  return (method, call) => {
    const started = performance.now();
    return new ServerInterceptingCall(call, {
      sendStatus: (status, next) => {
        recordRequest(method.path, status.code, (performance.now() - started) / 1000, "grpc");
        next(status);
      },
    });
  };
}
