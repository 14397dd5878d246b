import { join } from "node:path";
import { credentials, Metadata, type CallOptions, type ServiceError as ClientError } from "@grpc/grpc-js";
import { IndexServiceClient, type Document, type IngestDocumentsResponse } from "@attr-rag/contracts";
import { ChunkStore, startIndexServer, type IndexServerHandle, type IndexServiceLimits, type QueryEmbedder } from "../../src/index.js";
import { FAKE_EMBEDDER, fakeEmbedVector } from "./fakeEmbedder.mjs";
import { tempDir, testStoreOptions } from "./tempStore.js";

/** A cancellable fake embedder (the hashed bag of words of fakeEmbedder.mjs) with optional latency and failure. */
export class TestEmbedder implements QueryEmbedder {
  readonly id = FAKE_EMBEDDER.id;
  readonly dimensions = FAKE_EMBEDDER.dimensions;
  delayMs = 0;
  failWith: Error | undefined;
  /** Calls that saw their signal abort. */
  aborted = 0;
  calls = 0;

  async embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> {
    this.calls++;
    signal?.throwIfAborted();
    if (this.delayMs > 0) {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => {
          clearTimeout(timer);
          this.aborted++;
          reject(signal!.reason);
        };
        const timer = setTimeout(() => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        }, this.delayMs);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    }
    if (this.failWith) throw this.failWith;
    return texts.map(fakeEmbedVector);
  }
}

export interface TestServer extends AsyncDisposable {
  readonly handle: IndexServerHandle;
  readonly client: IndexServiceClient;
  readonly store: ChunkStore;
  readonly embedder: TestEmbedder;
  /** Directory of the store (reopenable after the server closed it). */
  readonly storeDir: string;
  /** Lines the service logged (unexpected errors). */
  readonly logs: string[];
}

/** A real store in a temp dir, a real server on 127.0.0.1:0 and a generated client; all removed on dispose. */
export async function startTestServer(limits: Partial<IndexServiceLimits> = {}): Promise<TestServer> {
  const dir = tempDir("attr-rag-service-");
  const embedder = new TestEmbedder();
  const store = await ChunkStore.open(join(dir.path, "store"), testStoreOptions({ embed: (t) => embedder.embed(t) }));
  const logs: string[] = [];
  const handle = await startIndexServer({ store, embedder, limits, log: (line) => logs.push(line), shutdownGraceMs: 1_000 });
  const client = new IndexServiceClient(handle.address, credentials.createInsecure());
  return {
    handle,
    client,
    store,
    embedder,
    storeDir: store.path,
    logs,
    [Symbol.asyncDispose]: async () => {
      client.close();
      await handle.close();
      await store.close();
      dir[Symbol.dispose]();
    },
  };
}

type UnaryMethod<Req, Res> = (request: Req, metadata: Metadata, options: Partial<CallOptions>, callback: (err: ClientError | null, res?: Res) => void) => unknown;

/** Calls a unary method of the generated client as a promise. */
export function call<Req, Res>(client: IndexServiceClient, method: UnaryMethod<Req, Res>, request: Req, options: Partial<CallOptions> = {}): Promise<Res> {
  return new Promise((resolve, reject) => {
    method.call(client, request, new Metadata(), options, (err, res) => (err ? reject(err) : resolve(res!)));
  });
}

/** Streams documents through IngestDocuments and resolves with the response. */
export function ingest(client: IndexServiceClient, documents: readonly Partial<Document>[], options: Partial<CallOptions> = {}): Promise<IngestDocumentsResponse> {
  return new Promise((resolve, reject) => {
    const stream = client.ingestDocuments(new Metadata(), options, (err, res) => (err ? reject(err) : resolve(res!)));
    for (const d of documents) stream.write({ document: { id: "", title: "", text: "", source: "", license: "", metadata: {}, ...d }, waitForReplicas: 0 });
    stream.end();
  });
}

/** The status code and details of a rejected call, for `expect(...).rejects` checks. */
export async function statusOf(promise: Promise<unknown>): Promise<{ code: number; details: string }> {
  try {
    await promise;
  } catch (err) {
    const e = err as ClientError;
    return { code: e.code, details: e.details };
  }
  throw new Error("expected the call to fail");
}
