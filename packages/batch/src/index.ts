// Public API of @attr-rag/batch: durable batches of Asks. Stores and queues (SQLite embedded, JetStream
// distributed), the runner that takes items from a queue, dead items, signed webhooks with their outbox, and
// the results download with its formats (our rows, OpenAI's batch lines). It never runs the pipeline itself:
// the gateway hands its runner the function that answers one item. Siblings import only from here.
export type { BatchQueue, BatchStore, ClaimedItem, NewBatch } from "./batchStore.js";
export { BatchRunner, type BatchRunnerOptions } from "./BatchRunner.js";
export { SqliteBatchStore, BATCHES_FILE, MAX_ITEM_ATTEMPTS } from "./sqlite/SqliteBatchStore.js";
export { JetStreamBatchStore } from "./jetstream/JetStreamBatchStore.js";
export { DEFAULT_BATCH_QUEUE, type BatchQueueSettings } from "./jetstream/batchStreams.js";
export { prepareBatch, itemsDigest } from "./prepareBatch.js";
export { hasEnded } from "./toBatch.js";
export { resultRow, type ResultRow, type SentenceRows } from "./resultRow.js";
export { openaiRow, type OpenAiBatchLine } from "./openaiRow.js";
export { HTTP_STATUS_OF_GRPC, httpStatusOf } from "./httpStatusOf.js";
export { MAX_AUTO_BATCH_CONCURRENCY, WorkerBasedConcurrency } from "./workerBasedConcurrency.js";
export { WebhookDeliverer } from "./webhooks/WebhookDeliverer.js";
export { JetStreamWebhookSender } from "./webhooks/JetStreamWebhookSender.js";
export { webhookSetup, type WebhookConfig, type WebhookSetup } from "./webhooks/webhookSetup.js";
export { resolveWebhookTarget } from "./webhooks/webhookTarget.js";
export { RESULTS_ROUTE, serveResults } from "./download/resultsDownload.js";
export { gatedEngine, InteractiveGate } from "./interactiveGate.js";
