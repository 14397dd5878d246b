import { status } from "@grpc/grpc-js";
import { counter, histogram, SECONDS_BUCKETS } from "./registry.js";

const CODE_NAMES: Record<number, string> = Object.fromEntries(Object.entries(status).filter(([, v]) => typeof v === "number").map(([k, v]) => [v as number, k]));

/** A gRPC status code's name ("OK", "INVALID_ARGUMENT"); an unknown number as itself. */
export function codeName(code: number): string {
  return CODE_NAMES[code] ?? String(code);
}

const requests = () =>
  counter({
    name: "attr_rag_requests_total",
    help: "Calls answered, by service, method, final gRPC status code and transport (grpc, http, nats).",
    labelNames: ["service", "method", "code", "transport"],
  });

const durations = () =>
  histogram({
    name: "attr_rag_request_duration_seconds",
    help: "Time from a call's arrival to its final status, by service, method and transport.",
    labelNames: ["service", "method", "transport"],
    buckets: SECONDS_BUCKETS,
  });

/** Counts one finished call; `path` is gRPC's "/package.Service/Method". */
export function recordRequest(path: string, code: number, seconds: number, transport: "grpc" | "http" | "nats"): void {
  const slash = path.lastIndexOf("/");
  const service = path.slice(path.startsWith("/") ? 1 : 0, slash);
  const method = path.slice(slash + 1);
  requests().inc({ service, method, code: codeName(code), transport });
  durations().observe({ service, method, transport }, seconds);
}
