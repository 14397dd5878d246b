import { status } from "@grpc/grpc-js";
import type { BatchServiceServer } from "@attr-rag/contracts";
import { isBatchId } from "@attr-rag/contracts";
import { ServiceError, type ServiceLog } from "@attr-rag/index";
import { hasEnded, prepareBatch, resolveWebhookTarget, type BatchStore } from "@attr-rag/batch";
import { currentTraceparent, extractTrace, inSpan, metadataCarrier, SpanKind } from "@attr-rag/telemetry";
import { streamingBatchCall, unaryBatchCall } from "./batchCall.js";

/** How often WatchBatch sends the batch even when nothing changed (a heartbeat clients can time out on). */
export const WATCH_HEARTBEAT_MS = 10_000;
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1_000;

export interface BatchServiceOptions {
  readonly store: BatchStore;
  readonly maxBatchItems: number;
  /** Batch webhooks: the hosts allowed although internal, or why this gateway cannot call webhooks. */
  readonly webhooks?: { readonly allowedHosts: readonly string[] } | { readonly unavailable: ServiceError };
  readonly log: ServiceLog;
}

/** CreateBatch's webhook_url, checked: on its face, then resolved (not into the gateway's own network). */
async function checkedWebhook(url: string | undefined, o: BatchServiceOptions): Promise<string | undefined> {
  if (url === undefined || url === "") return undefined;
  const webhooks = o.webhooks ?? { unavailable: new ServiceError(status.FAILED_PRECONDITION, "this gateway has no webhook signing secret (webhookSecretFile, or ATTR_RAG_WEBHOOK_SECRET)") };
  if ("unavailable" in webhooks) throw webhooks.unavailable;
  try {
    await resolveWebhookTarget(url, webhooks.allowedHosts);
  } catch (err) {
    throw new ServiceError(status.INVALID_ARGUMENT, (err as Error).message);
  }
  return url;
}

function batchIdOf(id: string): string {
  if (!isBatchId(id)) throw new ServiceError(status.INVALID_ARGUMENT, `batch_id must be 1-64 letters, digits, '-' or '_', got ${JSON.stringify(id.slice(0, 80))}`);
  return id;
}

/** BatchService over a batch store: the same RPCs whether the store is SQLite (embedded) or JetStream (distributed). */
export function batchServiceImplementation(o: BatchServiceOptions): BatchServiceServer {
  const { store, log } = o;
  return {
    // Traced (the client's traceparent continues): the span's context is kept with the batch, and every item's
    // trace links to it.
    createBatch: unaryBatchCall(log, "CreateBatch", (request, signal, metadata) =>
      inSpan(
        "attr_rag.v1.BatchService/CreateBatch",
        { "rpc.system": "grpc", "rpc.service": "attr_rag.v1.BatchService", "rpc.method": "CreateBatch" },
        async (span) => {
          const batch = prepareBatch(request, o);
          span.setAttribute("attr_rag.batch.id", batch.batchId);
          const webhookUrl = await checkedWebhook(request.webhookUrl, o);
          return store.create({ ...batch, traceparent: currentTraceparent(), ...(webhookUrl !== undefined ? { webhookUrl } : {}) }, signal);
        },
        { parent: extractTrace(metadataCarrier(metadata)), kind: SpanKind.SERVER },
      ),
    ),
    getBatch: unaryBatchCall(log, "GetBatch", async (request, signal) => ({ batch: await store.get(batchIdOf(request.batchId), signal) })),
    listBatches: unaryBatchCall(log, "ListBatches", async (request, signal) => {
      const pageSize = request.pageSize === 0 ? DEFAULT_PAGE_SIZE : request.pageSize;
      if (pageSize > MAX_PAGE_SIZE) throw new ServiceError(status.INVALID_ARGUMENT, `page_size must be at most ${MAX_PAGE_SIZE}, got ${pageSize}`);
      return store.list(pageSize, request.pageToken, signal);
    }),
    cancelBatch: unaryBatchCall(log, "CancelBatch", async (request, signal) => ({ batch: await store.cancel(batchIdOf(request.batchId), signal) })),
    watchBatch: streamingBatchCall(log, "WatchBatch", async (request, write, signal) => {
      const batchId = batchIdOf(request.batchId);
      let last = "";
      let lastSentAt = 0;
      for (;;) {
        const batch = await store.get(batchId, signal);
        // Counts, state and ETA decide whether it changed; the rate alone drifts every second.
        const key = JSON.stringify([batch.state, batch.counts]);
        if (key !== last || Date.now() - lastSentAt >= WATCH_HEARTBEAT_MS) {
          await write({ batch });
          last = key;
          lastSentAt = Date.now();
        }
        if (hasEnded(batch.state)) return;
        await store.changed(batchId, 1_000, signal);
        signal.throwIfAborted();
      }
    }),
    listBatchResults: streamingBatchCall(log, "ListBatchResults", async (request, write, signal) => {
      for await (const result of store.results(batchIdOf(request.batchId), request.offset, request.follow, signal)) await write({ result });
    }),
  };
}
