import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { chunkDocument, type Chunk } from "@attr-rag/core";
import Database from "better-sqlite3";
import { beforeAll, describe, expect, it } from "vitest";
import { ChunkStore, type VectorRepairReport } from "../src/index.js";
import { fakeEmbed, fakeEmbedVector } from "./helpers/fakeEmbedder.mjs";
import { storeViolations } from "./helpers/inspectStore.js";
import { runCrashChild, type CrashOp } from "./helpers/runCrashChild.js";
import { makeDocument, markerOf, TEST_CHUNKER } from "./helpers/syntheticDocs.mjs";
import { tempDir } from "./helpers/tempStore.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

/**
 * The child runs the compiled store (Node 20 has no TypeScript loader), so dist/ must exist and be at
 * least as new as every source file — a stale build would test old code. nx builds before it tests.
 */
function assertDistFresh(): void {
  const stale: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) {
        const built = join(PACKAGE, "dist", relative(join(PACKAGE, "src"), path)).replace(/\.ts$/, ".js");
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(path).mtimeMs) stale.push(relative(PACKAGE, path));
      }
    }
  };
  walk(join(PACKAGE, "src"));
  if (stale.length > 0) {
    throw new Error(
      `packages/index/dist is missing or older than ${stale.join(", ")}: the crash test runs the compiled store in a ` +
        `child process. Build it first: npm run build -w @attr-rag/index (or npx tsc -p tsconfig.json in packages/index).`,
    );
  }
}

/** Each document's last acknowledged state: a version, or null once deleted. */
type Expected = Map<string, number | null>;

function target(op: CrashOp): number | null {
  return op.op === "upsert" ? op.version : null;
}

/** Which of the candidate versions the store holds for `id`, or "corrupt" if its chunks match none. */
function actualVersion(store: ChunkStore, id: string, candidates: readonly (number | null)[]): number | null | "corrupt" {
  const doc = store.getDocument(id);
  if (!doc) return null;
  const canonical = (chunks: readonly Chunk[]) => JSON.stringify(chunks.map((c) => [c.id, c.docId, c.ordinal, c.start, c.end, c.text]));
  const chunks = canonical(store.getChunks(id, 0, 10_000));
  for (const v of candidates) {
    if (v === null) continue;
    const want = chunkDocument(id, makeDocument(id, v).text, TEST_CHUNKER);
    if (doc.chunkCount === want.length && chunks === canonical(want)) return v;
  }
  return "corrupt";
}

/**
 * Reopens the store (repairing vectors with the fake embedder) and checks every acknowledged write: present
 * documents hold exactly their acknowledged version's chunks and are found by BM25 (their marker word) and
 * dense search (each chunk's own embedding); deleted ones are gone. The write in flight at the kill may be
 * either before or after — but whole. Finally the raw SQLite invariants (no half-ingested document).
 */
async function verify(dir: string, expected: Expected, inFlight: CrashOp | undefined): Promise<VectorRepairReport> {
  const store = await ChunkStore.open(dir, { embed: fakeEmbed });
  const report = store.repairReport;
  try {
    const ids = new Set([...expected.keys(), ...(inFlight ? [inFlight.id] : [])]);
    for (const id of ids) {
      const allowed = [...(expected.has(id) ? [expected.get(id)!] : [null]), ...(inFlight?.id === id ? [target(inFlight)] : [])];
      const actual = actualVersion(store, id, allowed);
      expect(allowed, `document ${id}: store holds ${String(actual)}, acknowledged ${JSON.stringify(allowed)}`).toContain(actual);
      if (actual === "corrupt") continue;
      expected.set(id, actual); // the in-flight write resolved one way or the other; later rounds build on it
      for (let v = 1; v <= 4; v++) {
        const hits = store.searchBm25(markerOf(id, v), { k: 50 });
        if (v === actual) {
          expect(hits.length, `BM25 hits for ${id} v${v}`).toBe(store.getDocument(id)!.chunkCount);
          expect(hits.every((h) => h.docId === id)).toBe(true);
        } else {
          expect(hits, `BM25 must not find ${id} v${v}`).toEqual([]);
        }
      }
      if (actual !== null) {
        for (const chunk of store.getChunks(id, 0, 10_000)) {
          expect(store.searchDense(fakeEmbedVector(chunk.text), { k: 1 })[0]?.chunkId, `dense hit for ${chunk.id}`).toBe(chunk.id);
        }
      }
    }
    const stats = store.stats();
    expect(stats.missingVectors).toBe(0);
    expect(stats.vectors).toBe(stats.chunks);
    expect(stats.documents).toBe([...expected.values()].filter((v) => v !== null).length);
  } finally {
    await store.close();
  }
  expect(storeViolations(dir)).toEqual([]);
  const db = new Database(join(dir, "store.sqlite"), { readonly: true });
  const stored = (db.prepare("SELECT id FROM documents ORDER BY id").all() as { id: string }[]).map((r) => r.id);
  db.close();
  expect(stored).toEqual([...expected].filter(([, v]) => v !== null).map(([id]) => id).sort());
  return report;
}

describe("crash", () => {
  beforeAll(assertDistFresh);

  it("crash - kill -9 at four moments: every acknowledged write survives whole, stale and missing vectors are repaired", async () => {
    using tmp = tempDir();
    const store = join(tmp.path, "store");
    const vectorFile = join(store, "vectors.usearch");
    const expected: Expected = new Map();
    const record = (acked: readonly CrashOp[]) => acked.forEach((op) => expected.set(op.id, target(op)));

    // 1. The vector file has never been saved (saveEvery far away): every vector is rebuilt from SQLite.
    const first = await runCrashChild({ store, round: 1, saveEvery: 1_000 }, 6);
    expect(first.acked.length).toBeGreaterThanOrEqual(6);
    record(first.acked);
    expect(existsSync(vectorFile)).toBe(false);
    const afterFirst = await verify(store, expected, first.inFlight);
    expect(afterFirst.rebuilt).toBeGreaterThan(0);
    expect(afterFirst.missing).toBe(0);

    // 2. The vector file is saved after every write, so the kill lands in or around a save.
    const second = await runCrashChild({ store, round: 2, saveEvery: 1 }, 9);
    record(second.acked);
    await verify(store, expected, second.inFlight);

    // 3. Deterministic: saved after three writes, then a replace and a delete the file never saw. On reopen
    //    the old version's and the deleted document's vectors are stale, the new version's are missing.
    const script: CrashOp[] = [
      { op: "upsert", id: "s3-a", version: 1 },
      { op: "upsert", id: "s3-b", version: 1 },
      { op: "upsert", id: "s3-c", version: 1 },
      { op: "upsert", id: "s3-a", version: 2 },
      { op: "delete", id: "s3-b" },
    ];
    const third = await runCrashChild({ store, round: 3, saveEvery: 3, script }, Number.POSITIVE_INFINITY);
    expect(third.acked).toEqual(script);
    record(third.acked);
    const afterThird = await verify(store, expected, third.inFlight);
    const chunksOf = (id: string, v: number) => chunkDocument(id, makeDocument(id, v).text, TEST_CHUNKER).length;
    expect(afterThird).toEqual({ removedStale: chunksOf("s3-a", 1) + chunksOf("s3-b", 1), rebuilt: chunksOf("s3-a", 2), missing: 0 });

    // 4. Mixed new documents, replacements and deletions with periodic saves, killed mid-stream.
    const fourth = await runCrashChild({ store, round: 4, saveEvery: 3 }, 17);
    record(fourth.acked);
    expect(fourth.acked.some((op) => op.op === "delete")).toBe(true);
    expect(fourth.acked.some((op) => op.op === "upsert" && op.version > 1)).toBe(true);
    await verify(store, expected, fourth.inFlight);
  });
});
