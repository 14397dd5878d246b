import { existsSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import {
  ChunkStore,
  EmbedderMismatchError,
  StoreClosedError,
  StoreConfigMismatchError,
  StoreError,
  StoreLockedError,
  StoreNotFoundError,
  VectorsIncompleteError,
} from "../src/index.js";
import { FAKE_EMBEDDER, fakeEmbed, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { makeDocument, markerOf } from "./helpers/syntheticDocs.mjs";
import { tempDir, testStoreOptions } from "./helpers/tempStore.js";

/** A closed store holding doc-0..doc-{n-1}; returns its directory. */
async function buildStore(root: string, n = 3, extra = {}): Promise<string> {
  const store = await ChunkStore.open(join(root, "store"), testStoreOptions(extra));
  for (let i = 0; i < n; i++) await store.upsertDocument(makeDocument(`doc-${i}`), fakeEmbed);
  await store.close();
  return store.path;
}

describe("open", () => {
  it("open - a missing directory, or one without store.sqlite, is StoreNotFoundError unless create", async () => {
    using tmp = tempDir();
    const missing = join(tmp.path, "nowhere");
    await expect(ChunkStore.open(missing, { embedder: FAKE_EMBEDDER })).rejects.toThrow(StoreNotFoundError);
    await expect(ChunkStore.open(missing)).rejects.toThrow(/does not exist; check the path, or pass create: true/);
    expect(existsSync(missing)).toBe(false);
    await expect(ChunkStore.open(tmp.path)).rejects.toThrow(/is not a store \(it has no store.sqlite\)/);
    expect(readdirSync(tmp.path)).toEqual([]);
    writeFileSync(join(tmp.path, "file"), "x");
    await expect(ChunkStore.open(join(tmp.path, "file"), { create: true, embedder: FAKE_EMBEDDER })).rejects.toThrow(/is a file, not a store directory/);
  });

  it("open - creating a store needs an embedder; malformed options are rejected before anything is written", async () => {
    using tmp = tempDir();
    const dir = join(tmp.path, "s");
    await expect(ChunkStore.open(dir, { create: true })).rejects.toThrow(/needs options.embedder/);
    await expect(ChunkStore.open(dir, { create: true, embedder: { id: "", dimensions: 8 } })).rejects.toThrow(/embedder.id/);
    await expect(ChunkStore.open(dir, { create: true, embedder: { id: "e", dimensions: 0 } })).rejects.toThrow(/embedder.dimensions/);
    await expect(ChunkStore.open(dir, { create: true, embedder: FAKE_EMBEDDER, quantization: "i8" as never })).rejects.toThrow(/quantization/);
    await expect(ChunkStore.open(dir, { create: true, embedder: FAKE_EMBEDDER, chunker: { maxChars: 0 } })).rejects.toThrow(/invalid chunker options/);
    expect(existsSync(dir)).toBe(false);
  });

  it("open - a file that is not SQLite is a StoreError naming the file", async () => {
    using tmp = tempDir();
    writeFileSync(join(tmp.path, "store.sqlite"), "not a database, just text ".repeat(100));
    await expect(ChunkStore.open(tmp.path)).rejects.toThrow(/cannot open .*store.sqlite as the SQLite database/);
    expect(existsSync(join(tmp.path, "LOCK"))).toBe(false);
  });

  it("reopen - documents, chunks and vectors persist across close and open", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path);
    await using store = await ChunkStore.open(dir, { embedder: FAKE_EMBEDDER });
    expect(store.repairReport).toEqual({ removedStale: 0, rebuilt: 0, missing: 0 });
    expect(store.stats()).toMatchObject({ documents: 3, chunks: 12, vectors: 12, missingVectors: 0, unsavedVectorChanges: false });
    const chunk = store.getChunks("doc-1", 2, 2)[0]!;
    expect(store.searchDense(fakeEmbedVector(chunk.text), { k: 1 })[0]?.chunkId).toBe(chunk.id);
    expect(store.searchBm25(markerOf("doc-2", 1), { k: 10 })).toHaveLength(4);
  });

  it("embedder mismatch - another id or dimension count is EmbedderMismatchError naming both", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 1);
    const otherId = ChunkStore.open(dir, { embedder: { id: "use-lite-512", dimensions: 64 } });
    await expect(otherId).rejects.toThrow(EmbedderMismatchError);
    await expect(ChunkStore.open(dir, { embedder: { id: "use-lite-512", dimensions: 512 } })).rejects.toThrow(
      /built by embedder "fake-hashed-bow-64" \(64 dimensions\) but was opened with "use-lite-512" \(512 dimensions\)/,
    );
    await expect(ChunkStore.open(dir, { embedder: { id: FAKE_EMBEDDER.id, dimensions: 65 } })).rejects.toThrow(EmbedderMismatchError);
    // The failed opens released the lock; omitting the embedder adopts the recorded one.
    await using store = await ChunkStore.open(dir);
    expect(store.embedder).toEqual(FAKE_EMBEDDER);
  });

  it("config - chunker and quantization are fixed at creation", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 1);
    await expect(ChunkStore.open(dir, { chunker: { maxChars: 500 } })).rejects.toThrow(StoreConfigMismatchError);
    await expect(ChunkStore.open(dir, { chunker: { maxChars: 500 } })).rejects.toThrow(/chunker settings are fixed/);
    await expect(ChunkStore.open(dir, { quantization: "f32" })).rejects.toThrow(/store .* holds f16 vectors, not f32; quantization is fixed/);
  });

  it("config - new stores hold f16 vectors (half the f32 size, a chunk still found by its own embedding); an f32 store stays f32", async () => {
    using tmp = tempDir();
    const f32 = await buildStore(join(tmp.path, "a"), 3, { quantization: "f32" });
    const f16 = await buildStore(join(tmp.path, "b"), 3);
    await using store = await ChunkStore.open(f16);
    expect(store.stats().quantization).toBe("f16");
    const chunk = store.getChunks("doc-0", 1, 1)[0]!;
    expect(store.searchDense(fakeEmbedVector(chunk.text), { k: 1 })[0]?.chunkId).toBe(chunk.id);
    // A store that recorded f32 (one created before the default changed, or on request) is opened as f32
    // without being told, and refuses to become f16.
    await expect(ChunkStore.open(f32, { quantization: "f16" })).rejects.toThrow(/holds f32 vectors, not f16/);
    const f32Store = await ChunkStore.open(f32);
    expect(f32Store.stats().quantization).toBe("f32");
    const [f32Size, f16Size] = [f32Store.stats().files.vectors, store.stats().files.vectors];
    await f32Store.close();
    expect(f16Size).toBeLessThan(f32Size - 12 * 64);
  });

  it("lock - a second open of the same store is StoreLockedError until the first closes", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 1);
    const first = await ChunkStore.open(dir);
    await expect(ChunkStore.open(dir)).rejects.toThrow(StoreLockedError);
    await first.close();
    const second = await ChunkStore.open(dir);
    await second.close();
  });

  it("lock - a lock left by a dead process is taken over", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 1);
    writeFileSync(join(dir, "LOCK"), "2147483646\n"); // no such pid
    await using store = await ChunkStore.open(dir);
    expect(store.stats().documents).toBe(1);
  });

  it("close - is repeat-safe, waits for a running upsert, and later calls are StoreClosedError", async () => {
    using tmp = tempDir();
    const store = await ChunkStore.open(join(tmp.path, "s"), testStoreOptions());
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slowEmbed = async (texts: readonly string[]) => {
      await gate;
      return fakeEmbed(texts);
    };
    const pending = store.upsertDocument(makeDocument("slow"), slowEmbed);
    const closed = store.close();
    expect(() => store.searchBm25("x", { k: 1 })).toThrow(StoreClosedError);
    await expect(store.upsertDocument(makeDocument("late"), fakeEmbed)).rejects.toThrow(/store is closed/);
    release();
    await expect(pending).resolves.toMatchObject({ status: "indexed" });
    await closed;
    await store.close();
    await using reopened = await ChunkStore.open(store.path);
    expect(reopened.getDocument("slow")?.chunkCount).toBe(4);
    expect(reopened.stats().vectors).toBe(4);
  });

  it("repair - a lost vector file: BM25 still works, dense says what is missing, rebuildVectors restores it", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 3);
    rmSync(join(dir, "vectors.usearch"));
    const store = await ChunkStore.open(dir);
    expect(store.repairReport).toEqual({ removedStale: 0, rebuilt: 0, missing: 12 });
    expect(store.searchBm25(markerOf("doc-0", 1), { k: 10 })).toHaveLength(4);
    const query = fakeEmbedVector(store.getChunks("doc-0", 0, 0)[0]!.text);
    expect(() => store.searchDense(query, { k: 1 })).toThrow(VectorsIncompleteError);
    expect(() => store.searchHybrid("acid", query, { k: 1 })).toThrow(/12 of 12 chunks have no vector/);
    await expect(store.rebuildVectors(fakeEmbed)).resolves.toEqual({ removedStale: 0, rebuilt: 12, missing: 0 });
    expect(store.searchDense(query, { k: 1 })[0]?.chunkId).toBe("doc-0#0");
    await store.close();
    await using again = await ChunkStore.open(dir);
    expect(again.repairReport.missing).toBe(0);
  });

  it("repair - opening with embed rebuilds missing vectors during open", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 2);
    rmSync(join(dir, "vectors.usearch"));
    await using store = await ChunkStore.open(dir, { embed: fakeEmbed });
    expect(store.repairReport).toEqual({ removedStale: 0, rebuilt: 8, missing: 0 });
    expect(store.stats()).toMatchObject({ vectors: 8, missingVectors: 0, unsavedVectorChanges: false });
  });

  it("repair - an embedder failing during open's rebuild is EmbeddingError; the store opens without embed", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 1);
    rmSync(join(dir, "vectors.usearch"));
    const failing = async () => Promise.reject(new Error("out of memory"));
    await expect(ChunkStore.open(dir, { embed: failing })).rejects.toThrow(/rebuilding 4 missing vectors failed .*out of memory.*open without \{ embed \}/);
    await using store = await ChunkStore.open(dir);
    expect(store.stats().missingVectors).toBe(4);
  });

  it("repair - a damaged vector file is moved aside (not loaded: usearch would abort) and rebuilt", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 2);
    writeFileSync(join(dir, "vectors.usearch"), "garbage ".repeat(64));
    await using store = await ChunkStore.open(dir, { embed: fakeEmbed });
    expect(store.repairReport).toMatchObject({ rebuilt: 8, missing: 0 });
    expect(store.repairReport.discardedVectorFile).toMatch(/checksum matches no save recorded/);
    expect(readdirSync(dir).some((f) => f.startsWith("vectors.usearch.discarded-"))).toBe(true);
    const chunk = store.getChunks("doc-1", 3, 3)[0]!;
    expect(store.searchDense(fakeEmbedVector(chunk.text), { k: 1 })[0]?.chunkId).toBe(chunk.id);
  });

  it("repair - a crash after the vector file was renamed but before its save was recorded keeps the new file", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 2);
    // Rewind the bookkeeping to the moment between rename and the final transaction: the digest of the file
    // on disk is only the "next" one, and its keys are still marked pending.
    const db = new Database(join(dir, "store.sqlite"));
    db.exec(`UPDATE meta SET key = 'vector_file_next' WHERE key = 'vector_file';
             INSERT INTO meta(key, value) VALUES ('vector_file', '{"sha256":"0000","size":1}');
             UPDATE vector_state SET state = 'pending';`);
    db.close();
    writeFileSync(join(dir, "vectors.usearch.tmp-12345"), "half-written temp file of a crashed save");
    await using store = await ChunkStore.open(dir);
    expect(store.repairReport).toEqual({ removedStale: 0, rebuilt: 0, missing: 0 });
    expect(store.stats()).toMatchObject({ vectors: 8, missingVectors: 0 });
    expect(readdirSync(dir).filter((f) => f.includes(".tmp-"))).toEqual([]);
    const meta = new Database(join(dir, "store.sqlite"), { readonly: true });
    const keys = (meta.prepare("SELECT key FROM meta WHERE key LIKE 'vector_file%'").all() as { key: string }[]).map((r) => r.key);
    meta.close();
    expect(keys).toEqual(["vector_file"]); // the interrupted save is recorded as complete
  });

  it("schema - tables, FTS5 tokenizer, pragmas and user_version", async () => {
    using tmp = tempDir();
    const dir = await buildStore(tmp.path, 1);
    const db = new Database(join(dir, "store.sqlite"), { readonly: true });
    try {
      expect(db.pragma("user_version", { simple: true })).toBe(3);
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      const names = (db.prepare("SELECT name FROM sqlite_schema WHERE type IN ('table','trigger')").all() as { name: string }[]).map((r) => r.name);
      expect(names).toEqual(expect.arrayContaining(["meta", "documents", "chunks", "chunks_fts", "vector_state", "chunks_after_insert", "chunks_after_delete", "chunks_fts_terms", "chunk_term_counts", "chunks_after_delete_term_counts"]));
      const fts = db.prepare("SELECT sql FROM sqlite_schema WHERE name = 'chunks_fts'").get() as { sql: string };
      expect(fts.sql).toContain("tokenize = 'porter unicode61'");
      const meta = Object.fromEntries((db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
      expect(meta).toMatchObject({ embedder_id: "fake-hashed-bow-64", dimensions: "64", quantization: "f16" });
      expect(JSON.parse(meta["vector_file"]!)).toMatchObject({ size: expect.any(Number), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      // New stores' graph parameters (storeConfig.ts says why); stores that recorded others keep them.
      expect(JSON.parse(meta["hnsw"]!)).toEqual({ connectivity: 16, expansionAdd: 64, expansionSearch: 96 });
    } finally {
      db.close();
    }
    // A store written by a newer schema is refused, not mangled.
    const rw = new Database(join(dir, "store.sqlite"));
    rw.pragma("user_version = 99");
    rw.close();
    await expect(ChunkStore.open(dir)).rejects.toThrow(StoreError);
    await expect(ChunkStore.open(dir)).rejects.toThrow(/schema version 99, newer than this build understands \(3\)/);
  });
});
