import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { status } from "@grpc/grpc-js";
import { AskRequest, BatchItemResult, BatchItemState } from "@attr-rag/contracts";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BATCHES_FILE, MAX_ITEM_ATTEMPTS, prepareBatch, SqliteBatchStore } from "../src/index.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));
const CHILD = fileURLToPath(new URL("./helpers/batchCrashChild.mjs", import.meta.url));
const MAIN_ITEMS = 120;
const CANCEL_ITEMS = 30;

/** The child runs the compiled store: dist/ must be at least as new as every source file (nx builds before it tests). */
function assertDistFresh(): void {
  const stale: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith(".ts")) {
        const built = join(PACKAGE, "dist", relative(join(PACKAGE, "src"), path)).replace(/\.ts$/, ".js");
        if (!existsSync(built) || statSync(built).mtimeMs < statSync(path).mtimeMs) stale.push(relative(PACKAGE, path));
      }
    }
  };
  walk(join(PACKAGE, "src"));
  if (stale.length > 0) throw new Error(`packages/batch/dist is missing or older than ${stale.join(", ")}: build it first (npm run build -w @attr-rag/batch)`);
}

interface Ack {
  batch: string;
  index: number;
  attempt: number;
}

/** Runs the child; kills it with SIGKILL after `kill` (acks, milliseconds or the cancel), or lets it finish. */
function runChild(plan: object, kill: { acks?: number; ms?: number; onCancel?: boolean; onClaim?: boolean } | undefined): Promise<{ acks: Ack[]; cancelled: boolean; claimed?: Ack }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CHILD, JSON.stringify(plan)], { cwd: PACKAGE, stdio: ["ignore", "pipe", "pipe"] });
    const acks: Ack[] = [];
    let cancelled = false;
    let claimed: Ack | undefined;
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    let timer: NodeJS.Timeout | undefined;
    createInterface({ input: child.stdout }).on("line", (line) => {
      const e = JSON.parse(line) as { event: string } & Ack;
      if (e.event === "opened" && kill?.ms !== undefined) timer = setTimeout(() => child.kill("SIGKILL"), kill.ms);
      if (e.event === "ack") {
        acks.push({ batch: e.batch, index: e.index, attempt: e.attempt });
        if (kill?.acks !== undefined && acks.length >= kill.acks) child.kill("SIGKILL");
      }
      if (e.event === "cancelled") {
        cancelled = true;
        if (kill?.onCancel) child.kill("SIGKILL");
      }
      if (e.event === "claimed") {
        claimed = { batch: e.batch, index: e.index, attempt: 1 };
        if (kill?.onClaim) child.kill("SIGKILL");
      }
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (signal === "SIGKILL" || code === 0) resolve({ acks, cancelled, ...(claimed !== undefined ? { claimed } : {}) });
      else reject(new Error(`batch crash child exited ${code}:\n${stderr}`));
    });
  });
}

/**
 * The raw invariants of batches.sqlite: no half-made batch, one result per finished item and none for the
 * others, offsets 0..n-1, the finished count right, the end stamped exactly when nothing is left.
 */
function violations(stateDir: string): string[] {
  const db = new Database(join(stateDir, BATCHES_FILE), { readonly: true });
  const out: string[] = [];
  try {
    for (const b of db.prepare("SELECT id, total, finished, finished_ms FROM batches").all() as { id: string; total: number; finished: number; finished_ms: number | null }[]) {
      const items = db.prepare("SELECT count(*) AS n FROM items WHERE batch_id = ?").get(b.id) as { n: number };
      if (items.n !== b.total) out.push(`${b.id}: ${items.n} items for a total of ${b.total}`);
      const results = db.prepare("SELECT pos FROM results WHERE batch_id = ? ORDER BY pos").all(b.id) as { pos: number }[];
      if (results.length !== b.finished) out.push(`${b.id}: ${results.length} results, finished says ${b.finished}`);
      if (results.some((r, i) => r.pos !== i)) out.push(`${b.id}: result offsets are not 0..${results.length - 1}`);
      const ended = db.prepare("SELECT count(*) AS n FROM items WHERE batch_id = ? AND state IN ('succeeded', 'failed', 'cancelled')").get(b.id) as { n: number };
      if (ended.n !== results.length) out.push(`${b.id}: ${ended.n} items ended, ${results.length} results`);
      const open = b.total - ended.n;
      if ((open === 0) !== (b.finished_ms !== null)) out.push(`${b.id}: ${open} items open but finished_ms ${b.finished_ms}`);
    }
    const orphan = db.prepare("SELECT count(*) AS n FROM results r LEFT JOIN items i ON i.batch_id = r.batch_id AND i.idx = r.idx WHERE i.state NOT IN ('succeeded', 'failed', 'cancelled') OR i.idx IS NULL").get() as { n: number };
    if (orphan.n > 0) out.push(`${orphan.n} results of items not ended`);
  } finally {
    db.close();
  }
  return out;
}

describe("batches.sqlite crash safety", () => {
  beforeAll(assertDistFresh);
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-batch-crash-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("batch crash - kill -9 at five moments: every acknowledged result survives exactly once, items that were running run again, a cancel is whole", async () => {
    const stateDir = join(dir, "state");
    const plan = (o: { cancelAfter?: number; holdAfter?: number }) => ({ stateDir, batches: [{ id: "main", items: MAIN_ITEMS }, { id: "cancel-me", items: CANCEL_ITEMS }], cancel: "cancel-me", ...o });
    const acked = new Map<string, Ack>();
    let cancelled = false;
    let held: Ack | undefined;
    // 1. Milliseconds after the store opened: inside, or just after, the transactions that create the batches.
    // 2. Holding a claimed item, never finished. 3. Right after a cancel was acknowledged. 4. After more results.
    // 5. Run to the end.
    const rounds: { cancelAfter?: number; holdAfter?: number; kill?: { acks?: number; ms?: number; onCancel?: boolean; onClaim?: boolean } }[] = [
      { kill: { ms: 2 } },
      { holdAfter: 25, kill: { onClaim: true } },
      { cancelAfter: 5, kill: { onCancel: true } },
      { kill: { acks: 40 } },
      {},
    ];
    for (const [i, round] of rounds.entries()) {
      const outcome = await runChild(plan({ ...(round.cancelAfter !== undefined ? { cancelAfter: round.cancelAfter } : {}), ...(round.holdAfter !== undefined ? { holdAfter: round.holdAfter } : {}) }), round.kill);
      cancelled ||= outcome.cancelled;
      held ??= outcome.claimed;
      for (const a of outcome.acks) {
        const key = `${a.batch}/${a.index}`;
        expect(acked.has(key), `round ${i + 1}: ${key} acknowledged a second time`).toBe(false);
        acked.set(key, a);
      }
      expect(violations(stateDir), `after round ${i + 1}`).toEqual([]);
      // Reopening recovers: what was running is queued again, and every acknowledged result is there, unchanged.
      const store = SqliteBatchStore.open(stateDir);
      try {
        const running = store.db.prepare("SELECT count(*) AS n FROM items WHERE state = 'running'").get() as { n: number };
        expect(running.n).toBe(0);
        for (const [key, a] of acked) {
          const row = store.db.prepare("SELECT result FROM results WHERE batch_id = ? AND idx = ?").get(a.batch, a.index) as { result: Buffer } | undefined;
          expect(row, `acknowledged ${key} is missing after round ${i + 1}`).toBeDefined();
          const r = BatchItemResult.decode(row!.result);
          expect(r.attempts, key).toBe(a.attempt);
          expect(r.state).toBe(a.index % 3 === 2 ? BatchItemState.BATCH_ITEM_STATE_FAILED : BatchItemState.BATCH_ITEM_STATE_SUCCEEDED);
        }
        if (cancelled) {
          const c = await store.get("cancel-me");
          expect(c.counts!.queued + c.counts!.running).toBe(0);
          expect(c.counts!.cancelled).toBe(CANCEL_ITEMS);
        }
      } finally {
        await store.close();
      }
    }
    // The last round ran to the end: every item of main has its one result, the cancelled batch none run.
    const store = SqliteBatchStore.open(stateDir);
    try {
      const main = await store.get("main");
      expect(main.counts).toEqual({ queued: 0, running: 0, succeeded: MAIN_ITEMS - MAIN_ITEMS / 3, failed: MAIN_ITEMS / 3, cancelled: 0 });
      expect(cancelled).toBe(true);
      expect((await store.get("cancel-me")).counts).toEqual({ queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: CANCEL_ITEMS });
      // The item that was running at a kill ran again, and its result says it took a second start.
      expect(held).toBeDefined();
      const row = store.db.prepare("SELECT result FROM results WHERE batch_id = ? AND idx = ?").get(held!.batch, held!.index) as { result: Buffer };
      expect(BatchItemResult.decode(row.result).attempts).toBe(2);
    } finally {
      await store.close();
    }
  }, 120_000);

  it("batch crash - an item that was running at every death, 10 starts in a row, ends FAILED (INTERNAL) instead of running at each restart; the others run", async () => {
    const stateDir = join(dir, "attempts");
    const signal = new AbortController().signal;
    let store = SqliteBatchStore.open(stateDir);
    try {
      const items = ["poison", "fine"].map((itemId) => ({ itemId, request: AskRequest.fromPartial({ question: `the ${itemId} one` }) }));
      await store.create(prepareBatch({ batchId: "attempts", items, label: "" }, { maxBatchItems: 10 }));
      for (let start = 1; start <= MAX_ITEM_ATTEMPTS; start++) {
        const item = await store.queue.next(signal);
        expect([item!.itemId, item!.attempt]).toEqual(["poison", start]);
        // The process dies holding it: closing without a result leaves it running in batches.sqlite, as kill -9 does.
        await store.close();
        store = SqliteBatchStore.open(stateDir);
      }
      const fine = await store.queue.next(signal);
      expect([fine!.itemId, fine!.attempt]).toEqual(["fine", 1]);
      await fine!.complete(BatchItemResult.fromPartial({ batchId: "attempts", itemId: "fine", index: 1, state: BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, attempts: 1, finishedUnixMs: Date.now() }));
      const batch = await store.get("attempts");
      expect(batch.counts).toEqual({ queued: 0, running: 0, succeeded: 1, failed: 1, cancelled: 0 });
      expect(batch.finishedUnixMs).toBeGreaterThan(0);
      const results: BatchItemResult[] = [];
      for await (const r of store.results("attempts", 0, false, signal)) results.push(r);
      expect(results.map((r) => [r.itemId, r.state, r.statusCode, r.attempts])).toEqual([
        ["poison", BatchItemState.BATCH_ITEM_STATE_FAILED, status.INTERNAL, MAX_ITEM_ATTEMPTS],
        ["fine", BatchItemState.BATCH_ITEM_STATE_SUCCEEDED, status.OK, 1],
      ]);
      expect(results[0]!.statusMessage).toMatch(/stopped while this item ran, 10 times in a row .* it is not run again/);
      // Nothing is left to run, after another restart too.
      await store.close();
      store = SqliteBatchStore.open(stateDir);
      expect(await Promise.race([store.queue.next(signal), new Promise((r) => setTimeout(() => r("none"), 300))])).toBe("none");
    } finally {
      await store.close();
    }
  });
});
