import { credentials, Metadata, type ServiceError as ClientError } from "@grpc/grpc-js";
import { BatchServiceClient, type Batch, type BatchItemResult, type CreateBatchRequest, type CreateBatchResponse } from "@attr-rag/contracts";

/** Promise wrappers over the generated BatchService client, for tests. */
export class BatchClient {
  readonly client: BatchServiceClient;
  readonly #metadata = new Metadata();

  constructor(address: string, token?: string) {
    this.client = new BatchServiceClient(address, credentials.createInsecure(), { "grpc.max_send_message_length": -1 });
    if (token !== undefined) this.#metadata.set("authorization", `Bearer ${token}`);
  }

  create(request: Partial<CreateBatchRequest>): Promise<CreateBatchResponse> {
    return new Promise((resolve, reject) =>
      this.client.createBatch({ batchId: "", items: [], label: "", ...request }, this.#metadata, (err, res) => (err ? reject(err) : resolve(res))),
    );
  }

  get(batchId: string): Promise<Batch> {
    return new Promise((resolve, reject) => this.client.getBatch({ batchId }, this.#metadata, (err, res) => (err ? reject(err) : resolve(res.batch!))));
  }

  list(pageSize = 0, pageToken = ""): Promise<{ batches: Batch[]; nextPageToken: string }> {
    return new Promise((resolve, reject) => this.client.listBatches({ pageSize, pageToken }, this.#metadata, (err, res) => (err ? reject(err) : resolve(res))));
  }

  cancel(batchId: string): Promise<Batch> {
    return new Promise((resolve, reject) => this.client.cancelBatch({ batchId }, this.#metadata, (err, res) => (err ? reject(err) : resolve(res.batch!))));
  }

  /** Every WatchBatch message until the stream ends (or its error). */
  watch(batchId: string, onBatch: (b: Batch) => void = () => {}): Promise<{ batches: Batch[]; error?: ClientError }> {
    const call = this.client.watchBatch({ batchId }, this.#metadata);
    const batches: Batch[] = [];
    return new Promise((resolve) => {
      call.on("data", (r: { batch: Batch }) => {
        batches.push(r.batch);
        onBatch(r.batch);
      });
      call.on("error", (error: ClientError) => resolve({ batches, error }));
      call.on("end", () => resolve({ batches }));
    });
  }

  results(batchId: string, offset = 0, follow = false): Promise<{ results: BatchItemResult[]; error?: ClientError }> {
    const call = this.client.listBatchResults({ batchId, offset, follow }, this.#metadata);
    const results: BatchItemResult[] = [];
    return new Promise((resolve) => {
      call.on("data", (r: { result: BatchItemResult }) => results.push(r.result));
      call.on("error", (error: ClientError) => resolve({ results, error }));
      call.on("end", () => resolve({ results }));
    });
  }

  close(): void {
    this.client.close();
  }
}
