import { readFileSync } from "node:fs";
import { credentials, Metadata, type CallOptions, type ChannelCredentials } from "@grpc/grpc-js";
import { AttrRagServiceClient, type AskEvent, type AskRequest } from "@attr-rag/contracts";
import { InputError } from "@attr-rag/core";
import { remoteError } from "./remoteError.js";

export interface RemoteOptions {
  address: string;
  token?: string;
  /** PEM root certificate: connect with TLS. */
  tlsCa?: string;
  /** Seconds; the server stops the work when it passes. */
  timeout?: number;
}

/** A client for the gateway at options.address, with the bearer token and deadline every call carries. */
export function gatewayClient(options: RemoteOptions): { client: AttrRagServiceClient; metadata: Metadata; callOptions: Partial<CallOptions> } {
  let creds: ChannelCredentials;
  try {
    creds = options.tlsCa !== undefined ? credentials.createSsl(readFileSync(options.tlsCa)) : credentials.createInsecure();
  } catch (err) {
    throw new InputError(`--tls-ca: cannot read ${options.tlsCa}: ${(err as Error).message}`, 2, { cause: err });
  }
  const metadata = new Metadata();
  if (options.token !== undefined) metadata.set("authorization", `Bearer ${options.token}`);
  return {
    client: new AttrRagServiceClient(options.address, creds),
    metadata,
    callOptions: options.timeout !== undefined ? { deadline: Date.now() + options.timeout * 1000 } : {},
  };
}

/** Streams an Ask from a gateway; resolves when the stream ends, rejects with the server's status as a InputError. */
export function remoteAsk(options: RemoteOptions, request: AskRequest, onEvent: (e: AskEvent) => void, signal: AbortSignal): Promise<void> {
  const { client, metadata, callOptions } = gatewayClient(options);
  const call = client.ask(request, metadata, callOptions);
  const onAbort = () => call.cancel();
  signal.addEventListener("abort", onAbort, { once: true });
  return new Promise<void>((resolve, reject) => {
    call.on("data", (r: { event?: AskEvent }) => {
      if (r.event !== undefined) onEvent(r.event);
    });
    call.on("error", (err: { code?: number; details?: string; message?: string }) => reject(signal.aborted ? new InputError("interrupted", 130, { cause: err }) : remoteError(err)));
    call.on("end", () => resolve());
  }).finally(() => {
    signal.removeEventListener("abort", onAbort);
    client.close();
  });
}
