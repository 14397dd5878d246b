import type { GetStatsRequest, GetStatsResponse } from "@attr-rag/contracts";
import { splitterOf } from "../ChunkStore.js";
import type { ServiceContext } from "./context.js";
import { unaryHandler } from "./unaryHandler.js";

/** GetStats: counts, embedder and sizes on disk (the database size includes its WAL). */
export function getStats(ctx: ServiceContext): GetStatsResponse {
  const s = ctx.store.stats();
  return {
    documents: s.documents,
    chunks: s.chunks,
    embedder: s.embedder.id,
    dimension: s.dimensions,
    storePath: s.path,
    databaseBytes: s.files.sqlite + s.files.wal,
    vectorIndexBytes: s.files.vectors,
    vectors: s.vectors,
    splitter: splitterOf(s.chunker),
  };
}

export function getStatsHandler(ctx: ServiceContext) {
  return unaryHandler<GetStatsRequest, GetStatsResponse>(ctx, "GetStats", () => getStats(ctx));
}
