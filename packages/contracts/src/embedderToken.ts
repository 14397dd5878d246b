/**
 * The NATS subject token of an embedder id (EmbedJob.model; the workers' consumer name is made from it): the id
 * with every character other than letters, digits, '_' and '-' replaced by '_' (subject tokens and consumer
 * names cannot hold '.', ':' is risky in the latter), and an FNV-1a hash of the id itself, so two ids that
 * differ only in replaced characters never share a queue.
 * "gguf:bge-small-en-v1.5-f16.gguf@33212160" -> "embed-gguf_bge-small-en-v1_5-f16_gguf_33212160-1c9d0f3e".
 */
export function embedderToken(embedderId: string): string {
  if (embedderId === "") throw new RangeError("an embedder id cannot be empty");
  let h = 0x811c9dc5;
  for (let i = 0; i < embedderId.length; i++) h = Math.imul(h ^ embedderId.charCodeAt(i), 0x01000193) >>> 0;
  return `embed-${embedderId.replace(/[^A-Za-z0-9_-]/g, "_")}-${h.toString(16).padStart(8, "0")}`;
}

/** The id of a GGUF embedder, recorded in the stores it builds: its file name and parameter count. */
export function ggufEmbedderId(fileName: string, parameters: number): string {
  return `gguf:${fileName}@${parameters}`;
}
