import { status } from "@grpc/grpc-js";
import type { JetStreamClient, JetStreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { AskRequest, BATCH_ITEMS_STREAM, BATCH_RUNNERS_CONSUMER, BatchItemJob, BatchItemResult, BatchItemState } from "@attr-rag/contracts";
import { publishResult } from "./JetStreamBatchQueue.js";

interface MaxDeliveriesAdvisory {
  stream_seq: number;
  deliveries: number;
}

/**
 * An item whose every delivery ended without a result (the gateways running it crashed each time) would
 * leave its batch running forever: it ends FAILED (INTERNAL) with the reason, and leaves the queue. Every
 * gateway watches; the first to record the result wins, the others find it recorded.
 */
export function watchMaxDeliveries(nc: NatsConnection, js: JetStreamClient, jsm: JetStreamManager, log: (line: string) => void): () => void {
  const sub = nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.MAX_DELIVERIES.${BATCH_ITEMS_STREAM}.${BATCH_RUNNERS_CONSUMER}`, {
    callback: (err, msg) => {
      if (err) return;
      void (async () => {
        const advisory = msg.json<MaxDeliveriesAdvisory>();
        const stored = await jsm.streams.getMessage(BATCH_ITEMS_STREAM, { seq: advisory.stream_seq }).catch(() => null);
        if (stored === null) return;
        const job = BatchItemJob.decode(stored.data);
        const reason = `the item failed on all ${advisory.deliveries} of its deliveries (the gateways running it crashed or lost NATS each time)`;
        await publishResult(
          js,
          BatchItemResult.fromPartial({
            batchId: job.batchId,
            itemId: job.item?.itemId ?? "",
            index: job.index,
            question: (job.item?.request ?? AskRequest.create()).question,
            state: BatchItemState.BATCH_ITEM_STATE_FAILED,
            statusCode: status.INTERNAL,
            statusMessage: reason,
            attempts: advisory.deliveries,
            finishedUnixMs: Date.now(),
          }),
        );
        await jsm.streams.deleteMessage(BATCH_ITEMS_STREAM, advisory.stream_seq).catch(() => {});
        log(`batch ${job.batchId}: item ${job.item?.itemId ?? job.index}: ${reason}`);
      })().catch((e: unknown) => log(`batch items dead letters: ${(e as Error).message}`));
    },
  });
  return () => sub.unsubscribe();
}
