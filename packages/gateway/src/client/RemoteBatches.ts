// The gateway's BatchService as clients call it (the CLI, the batch benchmark): the same address, bearer token
// and TLS options as an Ask.
import { readFileSync } from "node:fs";
import { credentials, Metadata, type ChannelCredentials } from "@grpc/grpc-js";
import { BatchServiceClient, type Batch, type BatchItem, type BatchItemResult, type CreateBatchResponse } from "@attr-rag/contracts";
import { InputError } from "@attr-rag/core";
import { remoteError } from "./remoteError.js";

export interface BatchServerOptions {
  readonly server: string;
  readonly token?: string | undefined;
  readonly tlsCa?: string | undefined;
}

type GrpcError = { code?: number; details?: string; message?: string };

export class RemoteBatches {
  readonly #client: BatchServiceClient;
  readonly #metadata = new Metadata();

  constructor(o: BatchServerOptions) {
    let creds: ChannelCredentials;
    try {
      creds = o.tlsCa !== undefined ? credentials.createSsl(readFileSync(o.tlsCa)) : credentials.createInsecure();
    } catch (err) {
      throw new InputError(`--tls-ca: cannot read ${o.tlsCa}: ${(err as Error).message}`, 2, { cause: err });
    }
    const token = o.token ?? process.env.ATTR_RAG_TOKEN;
    if (token !== undefined) this.#metadata.set("authorization", `Bearer ${token}`);
    // A CreateBatch carries every item: no client-side message limit (the server sets its own, maxMessageBytes).
    this.#client = new BatchServiceClient(o.server, creds, { "grpc.max_send_message_length": -1, "grpc.max_receive_message_length": -1 });
  }

  create(batchId: string, items: readonly BatchItem[], label: string, webhookUrl?: string): Promise<CreateBatchResponse> {
    return this.#unary((cb) => this.#client.createBatch({ batchId, items: [...items], label, ...(webhookUrl !== undefined ? { webhookUrl } : {}) }, this.#metadata, cb));
  }

  async get(batchId: string): Promise<Batch> {
    return (await this.#unary<{ batch?: Batch }>((cb) => this.#client.getBatch({ batchId }, this.#metadata, cb))).batch!;
  }

  list(pageSize: number, pageToken: string): Promise<{ batches: Batch[]; nextPageToken: string }> {
    return this.#unary((cb) => this.#client.listBatches({ pageSize, pageToken }, this.#metadata, cb));
  }

  async cancel(batchId: string): Promise<Batch> {
    return (await this.#unary<{ batch?: Batch }>((cb) => this.#client.cancelBatch({ batchId }, this.#metadata, cb))).batch!;
  }

  /** Calls onBatch with every WatchBatch message; resolves with the last when the batch ends. */
  watch(batchId: string, onBatch: (b: Batch) => void, signal: AbortSignal): Promise<Batch> {
    const call = this.#client.watchBatch({ batchId }, this.#metadata);
    let last: Batch | undefined;
    return this.#stream(call, signal, (r: { batch?: Batch }) => {
      last = r.batch!;
      onBatch(last);
    }).then(() => last!);
  }

  /**
   * Calls onResult with each result from `offset` (waiting for more with follow) until the stream ends, one at a
   * time (the stream pauses while it works). If onResult throws, the call is cancelled and that error returned.
   */
  results(batchId: string, offset: number, follow: boolean, onResult: (r: BatchItemResult) => void | Promise<void>, signal: AbortSignal): Promise<void> {
    const call = this.#client.listBatchResults({ batchId, offset, follow }, this.#metadata);
    let chain = Promise.resolve();
    let failure: unknown;
    const streamed = this.#stream(call, signal, (r: { result?: BatchItemResult }) => {
      call.pause();
      chain = chain
        .then(() => (failure === undefined ? onResult(r.result!) : undefined))
        .catch((err: unknown) => {
          failure ??= err;
          call.cancel();
        })
        .finally(() => call.resume());
    });
    return streamed.then(
      () => chain.then(() => (failure !== undefined ? Promise.reject(failure) : undefined)),
      (err: unknown) => chain.then(() => Promise.reject(failure ?? err)),
    );
  }

  close(): void {
    this.#client.close();
  }

  #unary<T>(start: (cb: (err: GrpcError | null, res: T) => void) => void): Promise<T> {
    return new Promise((resolve, reject) => start((err, res) => (err ? reject(remoteError(err)) : resolve(res))));
  }

  #stream<T>(call: NodeJS.EventEmitter & { cancel(): void }, signal: AbortSignal, onData: (m: T) => void): Promise<void> {
    const onAbort = () => call.cancel();
    signal.addEventListener("abort", onAbort, { once: true });
    return new Promise<void>((resolve, reject) => {
      call.on("data", onData);
      call.on("error", (err: GrpcError) => reject(signal.aborted ? new InputError("interrupted", 130, { cause: err }) : remoteError(err)));
      call.on("end", () => resolve());
    }).finally(() => signal.removeEventListener("abort", onAbort));
  }
}
