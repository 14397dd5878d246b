import { status } from "@grpc/grpc-js";
import { BatchItemResult, BatchItemState, type AskEvent } from "@attr-rag/contracts";
import type { ClaimedItem } from "./batchStore.js";

/**
 * Collects what a batch item's result keeps of its Ask's events (the final answer, the sets, the α table, the
 * selection, timings and counters) and turns the Ask's end into the item's one result.
 */
export class ItemCollector {
  #result: BatchItemResult;

  constructor(item: Pick<ClaimedItem, "batchId" | "index" | "itemId" | "request" | "attempt">) {
    this.#result = BatchItemResult.fromPartial({
      batchId: item.batchId,
      itemId: item.itemId,
      index: item.index,
      question: item.request.question,
      attempts: item.attempt,
    });
  }

  readonly onEvent = (event: AskEvent): void => {
    const r = this.#result;
    r.requestId = event.requestId;
    const stage = event.stage;
    switch (stage?.$case) {
      case "aligned":
        r.sets = stage.value.sets;
        break;
      case "initialAnswerDelta":
        r.initialAnswer += stage.value.text;
        break;
      case "attribution":
        r.attribution = stage.value;
        break;
      case "selection":
        r.selection = stage.value;
        break;
      case "finalAnswer":
        r.finalAnswer = stage.value;
        break;
      case "done":
        r.done = stage.value;
        break;
      default:
    }
  };

  succeeded(nowMs = Date.now()): BatchItemResult {
    return { ...this.#result, state: BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, statusCode: status.OK, statusMessage: "", finishedUnixMs: nowMs };
  }

  /** The Ask failed: the item keeps what it got as far as it went, and its own status. */
  failed(code: number, message: string, nowMs = Date.now()): BatchItemResult {
    return { ...this.#result, state: BatchItemState.BATCH_ITEM_STATE_FAILED, statusCode: code, statusMessage: message, finishedUnixMs: nowMs };
  }

  cancelled(message: string, nowMs = Date.now()): BatchItemResult {
    return cancelledResult(this.#result, message, nowMs);
  }
}

export const CANCELLED_BEFORE_START = "the batch was cancelled before this item started";
export const CANCELLED_WHILE_RUNNING = "the batch was cancelled while this item ran; its engine work was stopped";

/** The result of an item its batch's cancel ended (never started, or stopped while it ran). */
export function cancelledResult(item: Pick<BatchItemResult, "batchId" | "itemId" | "index" | "question"> & Partial<BatchItemResult>, message: string, nowMs = Date.now()): BatchItemResult {
  return BatchItemResult.fromPartial({
    ...item,
    state: BatchItemState.BATCH_ITEM_STATE_CANCELLED,
    statusCode: status.CANCELLED,
    statusMessage: message,
    finishedUnixMs: nowMs,
  });
}
