// A batch result in the OpenAI Batch output shape (vLLM's run-batch writes the same lines), so pipelines that
// already read those files read ours: the item id is custom_id, our result row is the response body.
import { status } from "@grpc/grpc-js";
import type { BatchItemResult } from "@attr-rag/contracts";
import { httpStatusOf } from "./httpStatusOf.js";
import { resultRow, type ResultRow } from "./resultRow.js";

export interface OpenAiBatchLine {
  /** Unique per result line: "batch_req_" + the batch id and the item's position. */
  id: string;
  custom_id: string;
  response: { status_code: number; request_id: string; body: ResultRow };
  /** The item's gRPC status as code name and message when it did not succeed; null when it did. */
  error: { code: string; message: string } | null;
}

export function openaiRow(r: BatchItemResult): OpenAiBatchLine {
  const row = resultRow(r);
  const ok = r.statusCode === status.OK;
  return {
    id: `batch_req_${r.batchId}_${r.index}`,
    custom_id: r.itemId,
    response: { status_code: httpStatusOf(r.statusCode), request_id: r.requestId, body: row },
    error: ok ? null : { code: row.status, message: r.statusMessage },
  };
}
