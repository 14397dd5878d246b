import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChunkStore } from "../../src/index.js";
import type { OpenStoreOptions } from "../../src/index.js";
import { FAKE_EMBEDDER, fakeEmbed } from "./fakeEmbedder.mjs";
import { TEST_CHUNKER } from "./syntheticDocs.mjs";

/** A fresh temp directory, removed on dispose. */
export function tempDir(prefix = "attr-rag-index-"): { path: string } & Disposable {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, [Symbol.dispose]: () => rmSync(path, { recursive: true, force: true }) };
}

/** Options for a test store: fake embedder, one chunk per synthetic paragraph. */
export function testStoreOptions(extra: OpenStoreOptions = {}): OpenStoreOptions {
  return { create: true, embedder: FAKE_EMBEDDER, embed: fakeEmbed, chunker: TEST_CHUNKER, ...extra };
}

/** A new store in its own temp directory; closing and removing both happen on dispose. */
export async function tempStore(extra: OpenStoreOptions = {}): Promise<{ store: ChunkStore; dir: string } & AsyncDisposable> {
  const dir = tempDir();
  const store = await ChunkStore.open(join(dir.path, "store"), testStoreOptions(extra));
  return {
    store,
    dir: store.path,
    [Symbol.asyncDispose]: async () => {
      await store.close();
      dir[Symbol.dispose]();
    },
  };
}
