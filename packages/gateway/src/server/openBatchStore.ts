import type { ServiceLog } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import { DEFAULT_BATCH_QUEUE, JetStreamBatchStore, SqliteBatchStore, type BatchStore } from "@attr-rag/batch";

/** The runtime's batch store: batches.sqlite in the state dir (embedded), or JetStream (distributed). */
export async function openBatchStore(runtime: Runtime, log: ServiceLog): Promise<BatchStore> {
  if (runtime.nats !== undefined) {
    const settings = { ...DEFAULT_BATCH_QUEUE, ackWaitMs: runtime.config.batchAckWait * 1000 };
    return JetStreamBatchStore.open(runtime.nats.connection, runtime.nats.watch, { log, settings });
  }
  return SqliteBatchStore.open(runtime.config.stateDir ?? runtime.config.store);
}
