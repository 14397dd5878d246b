import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultModelPath } from "@attr-rag/engine";
import { loadConfig, Runtime, startGatewayServer, type GatewayServerHandle } from "@attr-rag/gateway";
import { ChunkStore, readDocuments, UseLiteEmbedder } from "@attr-rag/index";
import { CONSOLE_DIR } from "../src/index.js";

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const DEMO_CORPUS = join(REPO_ROOT, "examples/demo-corpus/corpus.jsonl");

/** The fixture store's 33rd document (see startConsoleGateway). */
export const STORY = {
  id: "story-01",
  title: "Lily in the park",
  text: "Once upon a time, there was a little girl named Lily. She was very happy and thanked her mom and dad. Lily and Tom played in the park. She said, \"Thank you, Mommy.\" They were so happy.",
};
export const DOCUMENTS = 33;

export interface GatewayFixture {
  readonly runtime: Runtime;
  readonly server: GatewayServerHandle;
  /** http://127.0.0.1:PORT */
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A real gateway for the browser: the demo corpus ingested into a fresh store, stories260K (or the model
 * ATTR_RAG_MODEL names), the HTTP port with the built console, a bearer token.
 */
export async function startConsoleGateway(token: string, webhookSecret?: string): Promise<GatewayFixture> {
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-web-"));
  const storeDir = join(dir, "store");
  const embedder = new UseLiteEmbedder();
  try {
    const store = await ChunkStore.open(storeDir, { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
    for await (const item of readDocuments([DEMO_CORPUS])) await store.upsertDocument(item.document, (t) => embedder.embed(t));
    // stories260K writes children's stories whatever it is asked; a story in the store gives its answers a
    // chunk they really resemble, so the pipeline's similarity citations (cosine >= 0.35) occur as they would
    // with a real model and real documents.
    await store.upsertDocument(STORY, (t) => embedder.embed(t));
    await store.close();
  } finally {
    await embedder.dispose();
  }
  const config = loadConfig({ overrides: { store: storeDir, model: defaultModelPath(), k: 6, maxTokens: 24, contextSize: 16_384, sequences: 4, threads: 1, authToken: token, ...(webhookSecret !== undefined ? { webhookSecret, webhookAllowedHosts: "127.0.0.1", webhookBackoffMs: 100 } : {}) } });
  const runtime = await Runtime.open(config);
  const server = await startGatewayServer({ runtime, httpPort: 0, consoleDir: CONSOLE_DIR, log: () => {} });
  return {
    runtime,
    server,
    url: `http://${server.http!.address}`,
    close: async () => {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
