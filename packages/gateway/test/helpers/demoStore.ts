import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultModelPath } from "@attr-rag/engine";
import { ChunkStore, readDocuments, UseLiteEmbedder } from "@attr-rag/index";
import { fromRunCache } from "../../../../tools/ci/testCache.mjs";
import { loadConfig, type GatewayConfig } from "../../src/index.js";

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const DEMO_CORPUS = join(REPO_ROOT, "examples/demo-corpus/corpus.jsonl");
/** examples/models/stories260K.gguf (a real tiny llama), or the model ATTR_RAG_MODEL names. */
export const TEST_MODEL = defaultModelPath();
export const QUESTION = "Explain all the required steps of the acetaminophen synthesis.";

/**
 * A fresh store of its own with the demo corpus ingested with USE-lite (the default embedder); remove() deletes
 * it. Under `npm test` it is built once per run and copied (tools/ci/testCache.mjs).
 */
export async function buildDemoStore(): Promise<{ dir: string; remove(): void }> {
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-gw-"));
  await fromRunCache("gateway-demo-store", join(dir, "store"), async (dest) => {
    const embedder = new UseLiteEmbedder();
    try {
      const store = await ChunkStore.open(dest, { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
      for await (const item of readDocuments([DEMO_CORPUS])) await store.upsertDocument(item.document, (t) => embedder.embed(t));
      await store.close();
    } finally {
      await embedder.dispose();
    }
  });
  return { dir: join(dir, "store"), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Small engine settings so a test Ask takes seconds on two cores; every request can still override k/tokens. */
export function testConfig(store: string, overrides: Record<string, unknown> = {}): GatewayConfig {
  return loadConfig({ overrides: { store, model: TEST_MODEL, k: 6, maxTokens: 24, contextSize: 16_384, sequences: 4, threads: 1, ...overrides } });
}
