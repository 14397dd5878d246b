import { status } from "@grpc/grpc-js";
import type { Chunk, GetChunksRequest, GetChunksResponse } from "@attr-rag/contracts";
import type { ServiceContext } from "./context.js";
import { invalidArgument, ServiceError } from "./ServiceError.js";
import { chunkConverter } from "./toProtoChunk.js";
import { unaryHandler } from "./unaryHandler.js";

/**
 * GetChunks: each inclusive range in request order, chunks in ordinal order. Unknown document NOT_FOUND,
 * last < first INVALID_ARGUMENT (both from the store, with the range named here).
 */
export function getChunks(ctx: ServiceContext, request: GetChunksRequest): GetChunksResponse {
  const { ranges } = request;
  const { maxChunkRanges, maxChunksPerResponse } = ctx.limits;
  if (ranges.length > maxChunkRanges) throw invalidArgument(`ranges has ${ranges.length} entries, more than the limit of ${maxChunkRanges}; split the request`);
  ranges.forEach((r, i) => {
    if (r.docId.length === 0) throw invalidArgument(`ranges[${i}].doc_id is empty`);
    if (r.lastOrdinal < r.firstOrdinal) {
      throw invalidArgument(`ranges[${i}] (${r.docId}): last_ordinal ${r.lastOrdinal} is before first_ordinal ${r.firstOrdinal}; the range is inclusive, first ≤ last`);
    }
  });
  const toChunk = chunkConverter(ctx.store);
  const chunks: Chunk[] = [];
  for (const r of ranges) {
    for (const c of ctx.store.getChunks(r.docId, r.firstOrdinal, r.lastOrdinal)) {
      if (chunks.length === maxChunksPerResponse) {
        throw new ServiceError(status.RESOURCE_EXHAUSTED, `the ranges cover more than ${maxChunksPerResponse} chunks, the limit of one response; ask for narrower ranges`);
      }
      chunks.push(toChunk(c));
    }
  }
  return { chunks };
}

export function getChunksHandler(ctx: ServiceContext) {
  return unaryHandler<GetChunksRequest, GetChunksResponse>(ctx, "GetChunks", (request) => getChunks(ctx, request));
}
