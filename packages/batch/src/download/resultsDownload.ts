// GET /v1/batches/{id}/results.jsonl: a batch's results over plain HTTP, for tools that resume (curl -C -).
// Results are kept in the order they finished and a recorded one never changes, so the file only grows at its
// end: a byte offset stays valid while the batch runs. Each response is a snapshot of the results recorded when
// it starts (its length and ETag are those of that snapshot); a later request gets the lines added since.
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { status } from "@grpc/grpc-js";
import type { BatchItemResult } from "@attr-rag/contracts";
import { ServiceError } from "@attr-rag/index";
import type { BatchStore } from "../batchStore.js";
import { httpStatusOf } from "../httpStatusOf.js";
import { openaiRow } from "../openaiRow.js";
import { resultRow } from "../resultRow.js";
import { hasEnded } from "../toBatch.js";
import { ifRangeHolds, noneMatchHits, parseRange } from "./rangeRequests.js";

export const RESULTS_ROUTE = /^\/v1\/batches\/([^/]+)\/results\.jsonl$/;
const FORMATS = ["rows", "openai"] as const;
type Format = (typeof FORMATS)[number];

function line(r: BatchItemResult, format: Format): Buffer {
  return Buffer.from(`${JSON.stringify(format === "openai" ? openaiRow(r) : resultRow(r))}\n`, "utf8");
}

function fail(res: ServerResponse, httpStatus: number, code: string, message: string): void {
  res.writeHead(httpStatus, { "content-type": "application/json" }).end(JSON.stringify({ code, message }));
}

/** Serves one GET/HEAD of the route; `batchId` is the decoded path segment. */
export async function serveResults(req: IncomingMessage, res: ServerResponse, store: BatchStore, batchId: string, signal: AbortSignal): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.setHeader("allow", "GET, HEAD");
    return fail(res, 405, "invalid_argument", `${req.method} is not allowed on a results file: use GET (with Range to resume)`);
  }
  const query = new URL(req.url ?? "/", "http://gateway").searchParams;
  const format = (query.get("format") ?? "rows") as Format;
  if (!FORMATS.includes(format)) return fail(res, 400, "invalid_argument", `format must be rows or openai, got ${JSON.stringify(query.get("format"))}`);
  let ended: boolean;
  let recorded: number;
  try {
    const batch = await store.get(batchId, signal);
    ended = hasEnded(batch.state);
    recorded = (batch.counts?.succeeded ?? 0) + (batch.counts?.failed ?? 0) + (batch.counts?.cancelled ?? 0);
  } catch (err) {
    if (err instanceof ServiceError) return fail(res, httpStatusOf(err.code), status[err.code]?.toLowerCase() ?? "unknown", err.message);
    throw err;
  }
  // First pass: the snapshot's lines (count, length, digest); the second pass streams the asked bytes of them.
  let count = 0;
  let total = 0;
  const digest = createHash("sha256");
  for await (const r of store.results(batchId, 0, false, signal)) {
    const bytes = line(r, format);
    digest.update(bytes);
    total += bytes.length;
    count++;
  }
  // Results are only added, so fewer readable than the batch had recorded before this read means some are gone
  // (expired before the batch's record): every later line moved up, and bytes resumed from an earlier download
  // would splice two files silently. No file is better than a wrong one.
  if (count < recorded) {
    return fail(
      res,
      410,
      "data_loss",
      `${recorded - count} of the ${recorded} results batch ${batchId} recorded are no longer kept (they expired before the batch's record), so its results file cannot be served whole or resumed; ` +
        `the ${count} left are still listed by ListBatchResults (attr-rag batch results), and the items without one can be submitted again as a new batch`,
    );
  }
  const etag = `"${digest.digest("hex").slice(0, 32)}"`;
  const headers: Record<string, string | number> = {
    "content-type": "application/jsonl; charset=utf-8",
    "accept-ranges": "bytes",
    etag,
    "cache-control": "no-cache",
    // Whether more lines may follow: a pipeline polls (or waits for the webhook) until it says ended.
    "x-batch-state": ended ? "ended" : "running",
    "x-batch-results": count,
  };
  if (noneMatchHits(req.headers["if-none-match"], etag)) return void res.writeHead(304, headers).end();
  // Range is defined for GET only (RFC 9110 14.2): a HEAD answers as the whole file's GET would.
  const range = req.method === "GET" && ifRangeHolds(req.headers["if-range"], etag) ? parseRange(req.headers.range, total) : undefined;
  if (range === "unsatisfiable") {
    return void res.writeHead(416, { ...headers, "content-range": `bytes */${total}`, "content-type": "application/json" }).end(
      JSON.stringify({ code: "out_of_range", message: `the results file has ${total} bytes so far${ended ? "" : " (the batch is still running: ask again later)"}` }),
    );
  }
  const { start, end } = range ?? { start: 0, end: total - 1 };
  res.writeHead(range ? 206 : 200, { ...headers, "content-length": end - start + 1, ...(range ? { "content-range": `bytes ${start}-${end}/${total}` } : {}) });
  if (req.method === "HEAD" || total === 0) return void res.end();
  let at = 0;
  let sent = 0;
  for await (const r of store.results(batchId, 0, false, signal)) {
    if (sent >= count) break;
    sent++;
    const bytes = line(r, format);
    const from = Math.max(start - at, 0);
    const to = Math.min(end + 1 - at, bytes.length);
    at += bytes.length;
    if (to <= from) {
      if (at > end) break;
      continue;
    }
    if (!res.write(from === 0 && to === bytes.length ? bytes : bytes.subarray(from, to))) {
      await new Promise<void>((resolve) => {
        const done = () => (res.off("drain", done), res.off("close", done), resolve());
        res.once("drain", done);
        res.once("close", done);
      });
      if (res.destroyed) return;
    }
    if (at > end) break;
  }
  res.end();
}
