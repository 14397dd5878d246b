// One gateway's gRPC clients for the soak workload: each call with a deadline, its error left as grpc-js gives
// it (the status code is what the history records). Channels reconnect by themselves after a gateway restart,
// as every gateway keeps its port.
import { credentials, Metadata } from "@grpc/grpc-js";
import {
  AskRequest,
  AttrRagServiceClient,
  BatchServiceClient,
  CancelBatchRequest,
  CreateBatchRequest,
  DeleteDocumentRequest,
  GetBatchRequest,
  IndexServiceClient,
  IngestDocumentsRequest,
  ListBatchResultsRequest,
  SearchRequest,
  type Batch,
  type BatchItem,
  type BatchItemResult,
  type IngestDocumentsResponse,
} from "@attr-rag/contracts";

export class SoakClients {
  readonly ask: AttrRagServiceClient;
  readonly batches: BatchServiceClient;
  readonly index: IndexServiceClient;

  constructor(readonly address: string, readonly http: string) {
    this.ask = new AttrRagServiceClient(address, credentials.createInsecure());
    this.batches = new BatchServiceClient(address, credentials.createInsecure());
    this.index = new IndexServiceClient(address, credentials.createInsecure());
  }

  close(): void {
    for (const c of [this.ask, this.batches, this.index]) c.close();
  }

  /** A streamed Ask to its end; rejects with the call's status. */
  askOnce(question: string, deadlineMs: number, settings: { k: number; maxTokens: number }): Promise<{ events: number }> {
    return new Promise((resolve, reject) => {
      let events = 0;
      const call = this.ask.ask(AskRequest.fromPartial({ question, retrieval: { k: settings.k }, generation: { maxTokens: settings.maxTokens } }), new Metadata(), { deadline: Date.now() + deadlineMs });
      call.on("data", () => events++);
      call.on("error", reject);
      call.on("end", () => resolve({ events }));
    });
  }

  createBatch(batchId: string, items: BatchItem[], webhookUrl: string | undefined, deadlineMs: number): Promise<{ created: boolean }> {
    const request = CreateBatchRequest.fromPartial({ batchId, items, label: "soak", ...(webhookUrl !== undefined ? { webhookUrl } : {}) });
    return new Promise((resolve, reject) => this.batches.createBatch(request, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve({ created: res!.created }))));
  }

  cancelBatch(batchId: string, deadlineMs: number): Promise<{ state: number }> {
    return new Promise((resolve, reject) => this.batches.cancelBatch(CancelBatchRequest.fromPartial({ batchId }), new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve({ state: res!.batch!.state }))));
  }

  getBatch(batchId: string, deadlineMs: number): Promise<Batch> {
    return new Promise((resolve, reject) => this.batches.getBatch(GetBatchRequest.fromPartial({ batchId }), new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve(res!.batch!))));
  }

  results(batchId: string, deadlineMs: number): Promise<BatchItemResult[]> {
    return new Promise((resolve, reject) => {
      const out: BatchItemResult[] = [];
      const call = this.batches.listBatchResults(ListBatchResultsRequest.fromPartial({ batchId }), new Metadata(), { deadline: Date.now() + deadlineMs });
      call.on("data", (r: { result?: BatchItemResult }) => r.result !== undefined && out.push(r.result));
      call.on("error", reject);
      call.on("end", () => resolve(out));
    });
  }

  ingest(docId: string, title: string, text: string, waitForReplicas: number, idempotencyKey: string, deadlineMs: number): Promise<IngestDocumentsResponse> {
    return new Promise((resolve, reject) => {
      const stream = this.index.ingestDocuments(new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve(res!)));
      stream.write(IngestDocumentsRequest.fromPartial({ document: { id: docId, title, text }, waitForReplicas, idempotencyKey }));
      stream.end();
    });
  }

  deleteDocument(docId: string, waitForReplicas: number, idempotencyKey: string, deadlineMs: number): Promise<{ found: boolean }> {
    const request = DeleteDocumentRequest.fromPartial({ docId, waitForReplicas, idempotencyKey });
    return new Promise((resolve, reject) => this.index.deleteDocument(request, new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve({ found: res!.found }))));
  }

  search(query: string, k: number, deadlineMs: number): Promise<string[]> {
    return new Promise((resolve, reject) =>
      this.index.search(SearchRequest.fromPartial({ query, options: { k } }), new Metadata(), { deadline: Date.now() + deadlineMs }, (err, res) => (err ? reject(err) : resolve(res!.chunks.map((c) => c.chunk!.docId)))),
    );
  }

  /** GET the batch's results file whole, then again from its middle with Range: the two parts must make the whole. */
  async downloadWithResume(batchId: string): Promise<{ bytes: number; resumedFrom: number; resumeMatches: boolean }> {
    const url = `http://${this.http}/v1/batches/${encodeURIComponent(batchId)}/results.jsonl`;
    const whole = await httpBytes(url, {});
    const cut = Math.floor(whole.length / 2);
    if (cut === 0) return { bytes: 0, resumedFrom: 0, resumeMatches: true };
    const rest = await httpBytes(url, { range: `bytes=${cut}-` });
    const joined = Buffer.concat([whole.subarray(0, cut), rest]);
    // The file only grows: the joined bytes are the whole download, or the whole plus results recorded since.
    return { bytes: whole.length, resumedFrom: cut, resumeMatches: joined.subarray(0, whole.length).equals(whole) };
  }
}

async function httpBytes(url: string, headers: Record<string, string>): Promise<Buffer> {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(15_000) });
  if (response.status !== 200 && response.status !== 206) throw Object.assign(new Error(`HTTP ${response.status} from ${url}`), { httpStatus: response.status });
  return Buffer.from(await response.arrayBuffer());
}
