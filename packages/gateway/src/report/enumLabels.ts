import {
  AttributionMethod,
  RetrievalMode,
  SelectionFlag,
  attributionMethodToJSON,
  retrievalModeToJSON,
  selectionFlagToJSON,
} from "@attr-rag/contracts";

// Enum names are derived from the generated *ToJSON helpers so a value added to a proto later still gets a
// readable label instead of a bare number.
function label(json: string, prefix: string): string {
  return json.startsWith(prefix) ? json.slice(prefix.length).toLowerCase().replace(/_/g, " ") : json;
}

export function retrievalModeLabel(mode: RetrievalMode): string {
  // UNSPECIFIED means the server default, which the proto defines as DENSE.
  if (mode === RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED) return "dense (default)";
  return label(retrievalModeToJSON(mode), "RETRIEVAL_MODE_");
}

export function attributionMethodLabel(method: AttributionMethod): string {
  if (method === AttributionMethod.ATTRIBUTION_METHOD_UNSPECIFIED) return "occlusion (default)";
  return label(attributionMethodToJSON(method), "ATTRIBUTION_METHOD_");
}

export function selectionFlagLabel(flag: SelectionFlag): string {
  return label(selectionFlagToJSON(flag), "SELECTION_FLAG_");
}
