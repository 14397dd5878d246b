import { Readable } from "node:stream";
import { Metadata } from "@grpc/grpc-js";

/** Where a bridged call's output goes: the HTTP side of the bridge. */
export interface CallSink {
  /** False when the reader is behind: the handler then waits for "drain" (as with a grpc-js stream). */
  write(message: unknown): boolean;
  end(): void;
  fail(status: unknown): void;
}

/**
 * The part of a grpc-js server call our handlers use (request, metadata, cancelled + "cancelled",
 * getDeadline, write/"drain", end, emit("error"), and for client streams a readable of requests), backed
 * by an HTTP request instead of an HTTP/2 stream. It is how one implementation of each RPC serves both
 * ports: the handlers never learn which transport they are on.
 */
export class BridgedCall extends Readable {
  cancelled = false;
  readonly metadata: Metadata;
  #wantMore: (() => void) | undefined;

  constructor(
    readonly request: unknown,
    headers: Headers,
    readonly deadline: number,
    signal: AbortSignal,
    readonly sink: CallSink,
  ) {
    super({ objectMode: true, highWaterMark: 16 });
    this.metadata = metadataOf(headers);
    const cancel = () => {
      if (this.cancelled) return;
      this.cancelled = true;
      this.emit("cancelled");
    };
    if (signal.aborted) cancel();
    else signal.addEventListener("abort", cancel, { once: true });
  }

  getDeadline(): number {
    return this.deadline;
  }

  write(message: unknown): boolean {
    return this.sink.write(message);
  }

  end(): void {
    this.sink.end();
  }

  /** Client streams: hands the handler one request; resolves when it may take another. */
  async offer(message: unknown): Promise<void> {
    if (this.push(message)) return;
    await new Promise<void>((resolve) => (this.#wantMore = resolve));
  }

  override _read(): void {
    const more = this.#wantMore;
    this.#wantMore = undefined;
    more?.();
  }

  /** The emitter's own "error" is a status for the sink, not a stream failure: never destroy the call for it. */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if (event === "error") {
      this.sink.fail(args[0]);
      return true;
    }
    return super.emit(event, ...args);
  }
}

/** HTTP headers as gRPC metadata (authorization and the rest); names gRPC would refuse are left out. */
function metadataOf(headers: Headers): Metadata {
  const metadata = new Metadata();
  headers.forEach((value, name) => {
    if (name.endsWith("-bin")) return;
    try {
      metadata.add(name, value);
    } catch {
      // A header name outside gRPC's alphabet cannot be metadata; no handler reads such a header.
    }
  });
  return metadata;
}
