import { fromBinary, toBinary, type DescMessage, type DescMethod, type DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import type { MethodDefinition, ServiceDefinition, UntypedServiceImplementation } from "@grpc/grpc-js";
import { recordRequest } from "@attr-rag/telemetry";
import { BridgedCall, type CallSink } from "./bridgedCall.js";

type AnyDefinition = MethodDefinition<unknown, unknown>;
type Handler = (call: BridgedCall, callback?: (err: unknown, response?: unknown) => void) => void;

/** How many streamed messages may wait for a slow HTTP reader before the handler is told to wait. */
const STREAM_HIGH_WATER = 32;

/**
 * A Connect implementation of `service` that runs the grpc-js implementation the gRPC port serves: each
 * request goes from Connect's message to our handler's message through the wire format (exact: the same
 * bytes a gRPC client would have sent), and each reply back the same way. Statuses become ConnectErrors
 * with the same code and message.
 */
export function bridgeService(service: DescService, definition: ServiceDefinition, implementation: UntypedServiceImplementation): Record<string, unknown> {
  const byPath = new Map<string, [AnyDefinition, Handler]>();
  for (const [name, method] of Object.entries(definition)) {
    // As grpc-js's addService: proto-loader definitions name methods "Check" and implementations "check".
    const handler = implementation[name] ?? (method.originalName !== undefined ? implementation[method.originalName] : undefined);
    if (handler !== undefined) byPath.set(method.path, [method as AnyDefinition, handler as unknown as Handler]);
  }
  const bridged: Record<string, unknown> = {};
  for (const method of service.methods) {
    const found = byPath.get(`/${service.typeName}/${method.name}`);
    if (found === undefined) continue;
    const [definition, handler] = found;
    bridged[method.localName] = bridgeMethod(method, definition, handler);
  }
  return bridged;
}

function bridgeMethod(method: DescMethod, definition: AnyDefinition, handler: Handler) {
  const toHandler = (message: never) => definition.requestDeserialize(Buffer.from(toBinary(method.input as DescMessage, message)));
  const fromHandler = (message: unknown) => fromBinary(method.output as DescMessage, definition.responseSerialize(message));
  const path = `/${method.parent.typeName}/${method.name}`;
  switch (method.methodKind) {
    case "unary":
      return (request: never, ctx: HandlerContext) => counted(path, unary(handler, toHandler(request), ctx, fromHandler));
    case "server_streaming":
      return (request: never, ctx: HandlerContext) => countedStream(path, serverStream(handler, toHandler(request), ctx, fromHandler));
    case "client_streaming":
      return (requests: AsyncIterable<never>, ctx: HandlerContext) => counted(path, clientStream(handler, requests, toHandler, ctx, fromHandler));
    default:
      return () => {
        throw new ConnectError(`${method.parent.typeName}/${method.name} streams both ways: use the gRPC port`, Code.Unimplemented);
      };
  }
}

/** A Connect error's code is gRPC's number for the same status; anything else counts as UNKNOWN. */
function codeOf(err: unknown): number {
  return err instanceof ConnectError ? err.code : 2;
}

/** Counts a bridged call in attr_rag_requests_total (transport "http") once it settles. */
function counted<T>(path: string, call: Promise<T>): Promise<T> {
  const started = performance.now();
  return call.then(
    (value) => {
      recordRequest(path, 0, (performance.now() - started) / 1000, "http");
      return value;
    },
    (err: unknown) => {
      recordRequest(path, codeOf(err), (performance.now() - started) / 1000, "http");
      throw err;
    },
  );
}

async function* countedStream<T>(path: string, stream: AsyncGenerator<T>): AsyncGenerator<T> {
  const started = performance.now();
  let code = 1; // a reader that stops early cancelled the call
  try {
    yield* stream;
    code = 0;
  } catch (err) {
    code = codeOf(err);
    throw err;
  } finally {
    recordRequest(path, code, (performance.now() - started) / 1000, "http");
  }
}

function deadlineOf(ctx: HandlerContext): number {
  const ms = ctx.timeoutMs();
  return ms === undefined ? Infinity : Date.now() + ms;
}

function unary(handler: Handler, request: unknown, ctx: HandlerContext, fromHandler: (m: unknown) => unknown): Promise<never> {
  return new Promise((resolve, reject) => {
    const call = new BridgedCall(request, ctx.requestHeader, deadlineOf(ctx), ctx.signal, unarySink(reject));
    handler(call, (err, response) => (err ? reject(toConnectError(err)) : resolve(fromHandler(response) as never)));
  });
}

async function clientStream(
  handler: Handler,
  requests: AsyncIterable<never>,
  toHandler: (m: never) => unknown,
  ctx: HandlerContext,
  fromHandler: (m: unknown) => unknown,
): Promise<never> {
  return new Promise<never>((resolve, reject) => {
    const call = new BridgedCall(undefined, ctx.requestHeader, deadlineOf(ctx), ctx.signal, unarySink(reject));
    handler(call, (err, response) => (err ? reject(toConnectError(err)) : resolve(fromHandler(response) as never)));
    void (async () => {
      try {
        for await (const request of requests) await call.offer(toHandler(request));
        call.push(null);
      } catch (err) {
        // A broken request stream (client gone, bad frame): the handler sees a cancel, the client the reason.
        call.cancelled = true;
        call.emit("cancelled");
        reject(err);
      }
    })();
  });
}

function unarySink(reject: (err: unknown) => void): CallSink {
  return {
    write: () => true,
    end: () => {},
    fail: (status) => reject(toConnectError(status)),
  };
}

async function* serverStream(handler: Handler, request: unknown, ctx: HandlerContext, fromHandler: (m: unknown) => unknown): AsyncGenerator<never> {
  const queue: unknown[] = [];
  let ended = false;
  let failure: ConnectError | undefined;
  let wake: (() => void) | undefined;
  const poke = () => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  let blocked = false;
  const call = new BridgedCall(request, ctx.requestHeader, deadlineOf(ctx), ctx.signal, {
    write: (message) => {
      if (ended || failure) return true;
      queue.push(message);
      poke();
      blocked = queue.length >= STREAM_HIGH_WATER;
      return !blocked;
    },
    end: () => {
      ended = true;
      poke();
    },
    fail: (status) => {
      failure ??= toConnectError(status);
      poke();
    },
  });
  ctx.signal.addEventListener("abort", poke, { once: true });
  handler(call);
  try {
    for (;;) {
      const message = queue.shift();
      if (message !== undefined) {
        if (blocked && queue.length < STREAM_HIGH_WATER / 2) {
          blocked = false;
          call.emit("drain");
        }
        yield fromHandler(message) as never;
        continue;
      }
      if (failure) throw failure;
      if (ended) return;
      if (ctx.signal.aborted) throw ConnectError.from(ctx.signal.reason, Code.Canceled);
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    // The client went away (or the stream broke) before the handler finished: cancel it, as gRPC would.
    if (!ended && !failure && !call.cancelled) {
      call.cancelled = true;
      call.emit("cancelled");
    }
    ctx.signal.removeEventListener("abort", poke);
  }
}

/** A grpc-js status ({code, details}) as the ConnectError with the same code; anything else is internal. */
export function toConnectError(status: unknown): ConnectError {
  if (status instanceof ConnectError) return status;
  const s = status as { code?: unknown; details?: unknown; message?: unknown } | undefined;
  if (s !== undefined && typeof s.code === "number" && s.code > 0 && s.code <= 16) {
    const message = typeof s.details === "string" ? s.details : typeof s.message === "string" ? s.message : "";
    return new ConnectError(message, s.code as Code);
  }
  return new ConnectError("internal error (the gateway's log has the details)", Code.Internal);
}
