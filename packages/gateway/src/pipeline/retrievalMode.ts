import { RetrievalMode } from "@attr-rag/contracts";
import type { RetrievalModeName } from "../config/gatewayConfig.js";

export function modeToProto(m: RetrievalModeName): RetrievalMode {
  return m === "dense" ? RetrievalMode.RETRIEVAL_MODE_DENSE : m === "bm25" ? RetrievalMode.RETRIEVAL_MODE_BM25 : RetrievalMode.RETRIEVAL_MODE_HYBRID;
}
