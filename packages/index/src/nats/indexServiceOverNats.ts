// IndexService on a distributed gateway's port: every RPC forwarded to the index over NATS (the same
// endpoints `attr-rag index serve --nats` answers), so a client ingests and searches at one address in both
// modes. The ingest stream keeps the index port's behaviour (groups of the documents that arrived together,
// per-document failures, the same limits) because it is the same stream handler, forwarding a group's
// documents together.
import type { UntypedServiceImplementation } from "@grpc/grpc-js";
import { IngestDocumentsRequest, IngestStatus, type IndexServiceServer } from "@attr-rag/contracts";
import type { NatsConnection } from "@attr-rag/nats";
import { distinctRuns } from "../ingest/distinctRuns.js";
import { ingestStreamHandler, type Outcome } from "../service/ingestDocuments.js";
import { resolveLimits, type IndexServiceLimits } from "../service/limits.js";
import { stderrLog, type ServiceLog } from "../service/toGrpcStatus.js";
import { unaryHandler } from "../service/unaryHandler.js";
import type { RemoteIndex } from "./remoteIndex.js";

/** Room for the NATS protocol line and headers beside a forwarded document. */
const NATS_OVERHEAD_BYTES = 4 * 1024;
/** Documents of one stream forwarded at once: enough to keep several embed workers busy, few enough that none waits out its request timeout. */
const FORWARDS_IN_FLIGHT = 8;

/** fn over the items, at most `limit` running at once; results in the items' order. */
async function inFlight<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

export function createIndexServiceOverNats(
  index: RemoteIndex,
  nc: NatsConnection,
  limits: Partial<IndexServiceLimits> = {},
  log: ServiceLog = stderrLog,
): IndexServiceServer & UntypedServiceImplementation {
  const ctx = { limits: resolveLimits(limits), log };
  const ingest = async (request: IngestDocumentsRequest, signal: AbortSignal): Promise<Outcome> => {
    const docId = request.document?.id ?? "";
    const bytes = IngestDocumentsRequest.encode(request).finish().length;
    const maxPayload = nc.info?.max_payload ?? Infinity;
    if (bytes + NATS_OVERHEAD_BYTES > maxPayload) {
      // NATS would refuse the message; this document fails alone, as an oversized one does on the index port.
      const message = `the document is ${bytes} bytes, more than NATS max_payload (${maxPayload} bytes) between the gateway and the index; raise max_payload in the NATS server config or ingest it on the index's own port`;
      return { result: { docId, status: IngestStatus.INGEST_STATUS_FAILED, chunkCount: 0, message }, added: 0, removed: 0 };
    }
    const response = await index.ingest(request, signal);
    const result = response.results[0] ?? { docId, status: IngestStatus.INGEST_STATUS_FAILED, chunkCount: 0, message: "the index answered without a result for the document" };
    return { result, added: response.chunksAdded, removed: response.chunksRemoved };
  };
  return {
    // Up to FORWARDS_IN_FLIGHT of a group's documents are in flight together, so the index embeds several at
    // once (on every worker serving its embedder); a repeated id waits for its earlier version, so the later one
    // wins, as on the index's port.
    ingestDocuments: ingestStreamHandler(ctx, async (requests, signal) => {
      const outcomes: Outcome[] = [];
      for (const run of distinctRuns(requests, (r) => r.document?.id ?? "")) outcomes.push(...(await inFlight(run, FORWARDS_IN_FLIGHT, (r) => ingest(r, signal))));
      return outcomes;
    }),
    search: unaryHandler(ctx, "Search", (request, signal) => index.search(request, signal)),
    getChunks: unaryHandler(ctx, "GetChunks", (request, signal) => index.getChunks(request, signal)),
    deleteDocument: unaryHandler(ctx, "DeleteDocument", (request, signal) => index.deleteDocument(request, signal)),
    getStats: unaryHandler(ctx, "GetStats", (_request, signal) => index.getStats(signal)),
    embedTexts: unaryHandler(ctx, "EmbedTexts", (request, signal) => index.embedTexts(request, signal)),
  };
}
