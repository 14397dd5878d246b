// The engine's, so the in-process embedders and the workers' embed jobs normalise the same way.
export { l2Normalize } from "@attr-rag/engine";
