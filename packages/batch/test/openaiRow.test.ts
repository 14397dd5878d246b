import { status } from "@grpc/grpc-js";
import { BatchItemResult, BatchItemState } from "@attr-rag/contracts";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { HTTP_STATUS_OF_GRPC, httpStatusOf, openaiRow, resultRow } from "../src/index.js";

// The OpenAI Batch output line (https://platform.openai.com/docs/guides/batch, as vLLM's run-batch writes it):
// {"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error": {"code", "message"} | null}.
function checkShape(line: unknown): asserts line is { id: string; custom_id: string; response: { status_code: number; request_id: string; body: Record<string, unknown> }; error: { code: string; message: string } | null } {
  const l = line as Record<string, unknown>;
  expect(Object.keys(l).sort()).toEqual(["custom_id", "error", "id", "response"]);
  expect(typeof l.id).toBe("string");
  expect(typeof l.custom_id).toBe("string");
  const response = l.response as Record<string, unknown>;
  expect(Object.keys(response).sort()).toEqual(["body", "request_id", "status_code"]);
  expect(Number.isInteger(response.status_code)).toBe(true);
  expect(typeof response.request_id).toBe("string");
  expect(typeof response.body).toBe("object");
  if (l.error !== null) {
    expect(Object.keys(l.error as object).sort()).toEqual(["code", "message"]);
    expect(typeof (l.error as { code: unknown }).code).toBe("string");
    expect(typeof (l.error as { message: unknown }).message).toBe("string");
  }
}

const base = { batchId: "b1", question: "Q", sets: [], attempts: 1, finishedUnixMs: 5, initialAnswer: "" };

describe("OpenAI Batch output lines", () => {
  it("openai rows - a succeeded item: 200, our row as the body, error null; JSON round trip keeps every field", () => {
    const r = BatchItemResult.fromPartial({ ...base, itemId: "q-1", index: 3, state: BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, statusCode: status.OK, requestId: "req-9", finalAnswer: { text: "Heat it.", citations: [], contextChunkIds: [] } });
    const line = JSON.parse(JSON.stringify(openaiRow(r)));
    checkShape(line);
    expect(line.id).toBe("batch_req_b1_3");
    expect(line.custom_id).toBe("q-1");
    expect(line.response.status_code).toBe(200);
    expect(line.response.request_id).toBe("req-9");
    expect(line.response.body).toEqual(JSON.parse(JSON.stringify(resultRow(r))));
    expect(line.response.body.answer).toBe("Heat it.");
    expect(line.error).toBeNull();
  });

  it("openai rows - failed and cancelled items carry the mapped HTTP status and the gRPC code and message", () => {
    const failed = openaiRow(BatchItemResult.fromPartial({ ...base, itemId: "q-2", index: 4, state: BatchItemState.BATCH_ITEM_STATE_FAILED, statusCode: status.INVALID_ARGUMENT, statusMessage: "question is empty", requestId: "" }));
    checkShape(failed);
    expect(failed.response.status_code).toBe(400);
    expect(failed.error).toEqual({ code: "INVALID_ARGUMENT", message: "question is empty" });
    const cancelled = openaiRow(BatchItemResult.fromPartial({ ...base, itemId: "q-3", index: 5, state: BatchItemState.BATCH_ITEM_STATE_CANCELLED, statusCode: status.CANCELLED, statusMessage: "the batch was cancelled" }));
    expect(cancelled.response.status_code).toBe(499);
    expect(cancelled.error!.code).toBe("CANCELLED");
  });

  it("openai rows - every gRPC code has its HTTP status, in one table", () => {
    const codes = Object.values(status).filter((v): v is number => typeof v === "number");
    expect(Object.keys(HTTP_STATUS_OF_GRPC).map(Number).sort((a, b) => a - b)).toEqual(codes.sort((a, b) => a - b));
    expect(httpStatusOf(status.RESOURCE_EXHAUSTED)).toBe(429);
    expect(httpStatusOf(status.UNAVAILABLE)).toBe(503);
    expect(httpStatusOf(99)).toBe(500);
  });

  it("openai rows - docs/batches.md shows exactly that table", () => {
    const doc = readFileSync(join(import.meta.dirname, "../../../docs/batches.md"), "utf8");
    const shown = new Map<string, number>();
    for (const line of doc.split("\n").filter((l) => /^\s*\| [A-Z_]+ \| \d+ \|/.test(l))) {
      for (const pair of line.matchAll(/([A-Z_]+) \| (\d+)/g)) shown.set(pair[1]!, Number(pair[2]));
    }
    const expected = new Map(Object.entries(status).filter(([, v]) => typeof v === "number").map(([name, code]) => [name, HTTP_STATUS_OF_GRPC[code as number]!]));
    expect(shown).toEqual(expected);
  });
});
