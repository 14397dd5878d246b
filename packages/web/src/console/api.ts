// The Connect protocol over fetch, as the gateway's HTTP port speaks it: unary calls are one JSON POST;
// server streams are enveloped JSON messages (1 flag byte, 4 length bytes) ending in an end-of-stream frame.

/** A call the gateway refused or that failed: Connect's error code name ("unauthenticated", …) and message. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

function headers(token: string, contentType: string): Record<string, string> {
  const h: Record<string, string> = { "content-type": contentType, "connect-protocol-version": "1" };
  if (token !== "") h.authorization = `Bearer ${token}`;
  return h;
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { code?: string; message?: string };
    return new ApiError(body.code ?? "unknown", body.message ?? res.statusText);
  } catch {
    return new ApiError("unavailable", `the gateway answered HTTP ${res.status} without an error body`);
  }
}

/** One unary RPC, e.g. unary("attr_rag.v1.IndexService/Search", {...}). */
export async function unary<T>(rpc: string, request: unknown, token: string, signal?: AbortSignal): Promise<T> {
  const res = await fetch(`/${rpc}`, { method: "POST", headers: headers(token, "application/json"), body: JSON.stringify(request), signal });
  if (!res.ok) throw await errorOf(res);
  return (await res.json()) as T;
}

/** One server-streaming RPC: yields each message's JSON; throws the stream's error (or a cancel) at the end. */
export async function* serverStream<T>(rpc: string, request: unknown, token: string, signal: AbortSignal): AsyncGenerator<T> {
  const json = new TextEncoder().encode(JSON.stringify(request));
  const body = new Uint8Array(5 + json.length);
  new DataView(body.buffer).setUint32(1, json.length);
  body.set(json, 5);
  const res = await fetch(`/${rpc}`, { method: "POST", headers: headers(token, "application/connect+json"), body, signal });
  if (!res.ok || res.body === null) throw await errorOf(res);
  const reader = res.body.getReader();
  let buffered = new Uint8Array(0);
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const joined = new Uint8Array(buffered.length + value.length);
    joined.set(buffered);
    joined.set(value, buffered.length);
    buffered = joined;
    while (buffered.length >= 5) {
      const view = new DataView(buffered.buffer, buffered.byteOffset);
      const length = view.getUint32(1);
      if (buffered.length < 5 + length) break;
      const flags = buffered[0]!;
      const message = JSON.parse(new TextDecoder().decode(buffered.subarray(5, 5 + length))) as T & { error?: { code: string; message?: string } };
      buffered = buffered.subarray(5 + length);
      if (flags & 2) {
        if (message.error) throw new ApiError(message.error.code, message.error.message ?? message.error.code);
        return;
      }
      yield message as Awaited<T>;
    }
  }
  throw new ApiError("unavailable", "the stream ended without its end-of-stream frame (the connection broke)");
}

/** A sentence a chemist can act on, for any failure of a call. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) {
    if (err.code === "unauthenticated") return `The gateway refused the request: ${err.message}. Enter the gateway's bearer token in the Token field at the top.`;
    if (err.code === "resource_exhausted") return `The gateway is busy or the request is too large: ${err.message}`;
    if (err.code === "canceled") return "Cancelled.";
    return `${err.message} (${err.code})`;
  }
  if (err instanceof DOMException && err.name === "AbortError") return "Cancelled.";
  return `The gateway could not be reached: ${(err as Error).message}`;
}
