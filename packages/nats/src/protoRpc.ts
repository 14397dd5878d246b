// Protobuf request/reply over NATS services: the server side (an endpoint of a @nats-io/services service,
// failures as service error headers carrying a gRPC status code) and the client side (a request that
// rebuilds that error, and fails at once when the connection is lost or nobody serves the subject).
import { Svcm, type Service, type ServiceMsg } from "@nats-io/services";
import { headers, type NatsConnection } from "@nats-io/transport-node";
import { extractTrace, injectTrace, inSpan, recordRequest, SpanKind, trace } from "@attr-rag/telemetry";
import type { NatsEndpoint, NatsServiceInfo } from "@attr-rag/contracts";
import type { ConnectionWatch } from "./connectionWatch.js";

/** What a ts-proto message value offers (MessageFns). */
export interface ProtoCodec<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(bytes: Uint8Array): T;
}

/** gRPC status codes used on the wire (the convention of our services' error headers). */
export const Code = { CANCELLED: 1, INVALID_ARGUMENT: 3, DEADLINE_EXCEEDED: 4, NOT_FOUND: 5, RESOURCE_EXHAUSTED: 8, FAILED_PRECONDITION: 9, INTERNAL: 13, UNAVAILABLE: 14 } as const;

/** A failure reported by a NATS service (or the absence of one): a gRPC status code and a message. */
export class RemoteError extends Error {
  override name = "RemoteError";
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface EndpointHandler<Req, Res> {
  readonly endpoint: NatsEndpoint;
  readonly request: ProtoCodec<Req>;
  readonly response: ProtoCodec<Res>;
  handle(request: Req, signal: AbortSignal): Promise<Res>;
}

/**
 * Starts a NATS service with one endpoint per handler, in the service's queue group. `toError` turns a
 * failure into the status the caller gets (unexpected failures: INTERNAL, logged by the caller's mapping).
 */
export async function serveService(
  nc: NatsConnection,
  info: NatsServiceInfo<string>,
  handlers: readonly EndpointHandler<any, any>[],
  toError: (err: unknown, endpoint: string) => { code: number; message: string },
  /** Extra data every endpoint reports in `$SRV.STATS` (a JSON value). */
  statsData?: () => unknown,
): Promise<Service> {
  const service = await new Svcm(nc).add({
    name: info.name,
    version: info.version,
    description: info.description,
    queue: info.queue,
    ...(statsData !== undefined ? { statsHandler: async () => statsData() } : {}),
  });
  for (const h of handlers) {
    service.addEndpoint(h.endpoint.name, {
      subject: h.endpoint.subject,
      metadata: { ...h.endpoint.metadata },
      handler: (err, msg: ServiceMsg) => {
        if (err) return;
        void (async () => {
          const started = performance.now();
          const answered = (code: number) => recordRequest(`/${info.name}/${h.endpoint.name}`, code, (performance.now() - started) / 1000, "nats");
          let request;
          try {
            request = h.request.decode(msg.data);
          } catch (decodeErr) {
            msg.respondError(Code.INVALID_ARGUMENT, `the request is not a ${h.endpoint.metadata.request}: ${(decodeErr as Error).message}`);
            answered(Code.INVALID_ARGUMENT);
            return;
          }
          // A caller's trace (traceparent in the request headers) continues here; an untraced request (a stats
          // poll) starts none.
          const parent = extractTrace(msg.headers);
          const run = () => h.handle(request, new AbortController().signal);
          try {
            const response = await (trace.getSpanContext(parent) !== undefined ? inSpan(`nats.server ${info.name}/${h.endpoint.name}`, { "messaging.system": "nats", "rpc.service": info.name, "rpc.method": h.endpoint.name }, run, { parent, kind: SpanKind.SERVER }) : run());
            msg.respond(h.response.encode(response).finish());
            answered(0);
          } catch (handleErr) {
            const { code, message } = toError(handleErr, h.endpoint.name);
            msg.respondError(code, message);
            answered(code);
          }
        })();
      },
    });
  }
  // The endpoints' subscriptions reach the server only when the connection flushes: until then a request
  // from another connection finds no responders. Callers treat the returned service as ready.
  await nc.flush();
  return service;
}

export interface RequestOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal | undefined;
  readonly watch?: ConnectionWatch | undefined;
  /** Named in errors: "the selector", "the index". */
  readonly serviceLabel: string;
  /** How to start the service, for "no responders". */
  readonly startHint: string;
}

export async function requestProto<Req, Res>(nc: NatsConnection, subject: string, request: Req, codecs: { request: ProtoCodec<Req>; response: ProtoCodec<Res> }, o: RequestOptions): Promise<Res> {
  o.signal?.throwIfAborted();
  if (o.watch !== undefined && !o.watch.connected) throw new RemoteError(Code.UNAVAILABLE, `no connection to NATS, so ${o.serviceLabel} cannot be reached; retrying in the background`);
  if (trace.getActiveSpan() !== undefined) {
    return inSpan(`nats.request ${subject}`, { "messaging.system": "nats", "messaging.destination.name": subject }, () => send(nc, subject, request, codecs, o), { kind: SpanKind.CLIENT });
  }
  return send(nc, subject, request, codecs, o);
}

async function send<Req, Res>(nc: NatsConnection, subject: string, request: Req, codecs: { request: ProtoCodec<Req>; response: ProtoCodec<Res> }, o: RequestOptions): Promise<Res> {
  // The caller's trace goes with the request (W3C traceparent header), so the service's spans join it.
  const traced = headers();
  injectTrace(traced);
  const pending = nc.request(subject, codecs.request.encode(request).finish(), { timeout: o.timeoutMs, headers: traced });
  const stops: Promise<never>[] = [];
  const cleanups: (() => void)[] = [];
  for (const [signal, make] of [
    [o.signal, (s: AbortSignal) => s.reason ?? new Error("aborted")],
    [o.watch?.lost, () => new RemoteError(Code.UNAVAILABLE, `the connection to NATS was lost while waiting for ${o.serviceLabel}`)],
  ] as const) {
    if (signal === undefined) continue;
    stops.push(
      new Promise<never>((_, reject) => {
        const onAbort = () => reject(make(signal));
        if (signal.aborted) onAbort();
        signal.addEventListener("abort", onAbort, { once: true });
        cleanups.push(() => signal.removeEventListener("abort", onAbort));
      }),
    );
  }
  try {
    const reply = await Promise.race([pending, ...stops]);
    const code = reply.headers?.get("Nats-Service-Error-Code");
    if (code !== undefined && code !== "") {
      throw new RemoteError(Number(code), reply.headers?.get("Nats-Service-Error") || `${o.serviceLabel} failed`);
    }
    return codecs.response.decode(reply.data);
  } catch (err) {
    if (err instanceof RemoteError || o.signal?.aborted) throw err;
    const text = err instanceof Error ? err.message : String(err);
    if (/no responders|503/i.test(text)) throw new RemoteError(Code.UNAVAILABLE, `${o.serviceLabel} is not running on NATS (nobody answers ${subject}); start it with ${o.startHint}`);
    if (/timeout/i.test(text)) throw new RemoteError(Code.DEADLINE_EXCEEDED, `${o.serviceLabel} did not answer within ${o.timeoutMs} ms`);
    throw new RemoteError(Code.UNAVAILABLE, `cannot reach ${o.serviceLabel} over NATS: ${text}`);
  } finally {
    for (const c of cleanups) c();
    pending.catch(() => {});
  }
}
