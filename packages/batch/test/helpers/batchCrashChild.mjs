// The child of batchCrash.test.ts: runs the compiled batch store (dist/) and reports, one JSON line each, what
// it was told is durable: {"event":"ack", batch, index} once complete() resolved, {"event":"cancelled", batch}
// once cancel() resolved. The parent kills it with SIGKILL at some moment and checks the store afterwards.
import { AskRequest, BatchItemResult, BatchItemState } from "@attr-rag/contracts";
import { prepareBatch, SqliteBatchStore } from "../../dist/index.js";

const plan = JSON.parse(process.argv[2]);
const say = (event) => process.stdout.write(`${JSON.stringify(event)}\n`);
const store = SqliteBatchStore.open(plan.stateDir);
say({ event: "opened" });
for (const b of plan.batches) {
  const items = Array.from({ length: b.items }, (_, i) => ({ itemId: `${b.id}-${i}`, request: AskRequest.fromPartial({ question: `question ${i} of ${b.id}` }) }));
  await store.create(prepareBatch({ batchId: b.id, items, label: "" }, { maxBatchItems: 100_000 }));
}
const signal = new AbortController().signal;
let done = 0;
for (;;) {
  if (plan.cancelAfter !== undefined && done === plan.cancelAfter) {
    await store.cancel(plan.cancel);
    say({ event: "cancelled", batch: plan.cancel });
  }
  const item = await Promise.race([store.queue.next(signal), new Promise((r) => setTimeout(() => r(undefined), 200))]);
  if (item === undefined) break;
  if (plan.holdAfter !== undefined && done === plan.holdAfter) {
    // Die holding it: the item was claimed (running) and never finished.
    say({ event: "claimed", batch: item.batchId, index: item.index });
    await new Promise(() => {});
  }
  // Every third item fails with its own status, the rest succeed: both kinds of result must survive.
  const failed = item.index % 3 === 2;
  const result = BatchItemResult.fromPartial({
    batchId: item.batchId,
    itemId: item.itemId,
    index: item.index,
    question: item.request.question,
    state: failed ? BatchItemState.BATCH_ITEM_STATE_FAILED : BatchItemState.BATCH_ITEM_STATE_SUCCEEDED,
    statusCode: failed ? 3 : 0,
    statusMessage: failed ? "bad item" : "",
    finalAnswer: failed ? undefined : { text: `answer to ${item.request.question}`, citations: [], contextChunkIds: [] },
    attempts: item.attempt,
    finishedUnixMs: Date.now(),
  });
  if (await item.complete(result)) say({ event: "ack", batch: item.batchId, index: item.index, attempt: item.attempt });
  done++;
}
say({ event: "done" });
await store.close();
