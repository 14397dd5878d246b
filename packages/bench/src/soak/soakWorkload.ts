// The soak's mixed load, drawn from the run's seed: streamed Asks with deadlines; batches (created, sometimes
// created again under the same id, sometimes cancelled, downloaded with a resume in the middle), half of them
// with a webhook; documents ingested, replaced and deleted (waiting for 0 or 1 replicas); searches. Each loop
// runs one operation at a time against a gateway drawn at random, so the history knows the order of the writes
// to each document. Every operation goes into the history with how it ended.
import { BatchItem, type AskRequest } from "@attr-rag/contracts";
import { SeededRandom } from "@attr-rag/core";
import type { SoakClients } from "./soakClients.js";
import type { SoakHistoryLog } from "./soakHistoryLog.js";

export const SOAK_QUESTIONS = [
  "Explain all the required steps of the acetaminophen synthesis.",
  "How do I collect oxygen gas over water?",
  "How is the crude product recrystallised?",
  "What safety equipment does a titration need?",
];
const WORDS = ["reflux", "filtrate", "burette", "condenser", "desiccator", "pipette", "crucible", "eluent", "meniscus", "sublimation"];
const DOCS = 12;

export interface WorkloadContext {
  readonly seed: number;
  readonly history: SoakHistoryLog;
  /** The gateways' clients; one is drawn per operation. */
  readonly gateways: readonly SoakClients[];
  readonly webhookUrl: string;
  /** Ask and batch item settings: small, so a tiny model on two cores keeps up. */
  readonly k: number;
  readonly maxTokens: number;
  readonly askDeadlineMs: number;
}

/** Runs every loop until `stop()` says so; resolves once each loop's operation in flight has ended. */
export async function runWorkload(ctx: WorkloadContext, stop: () => boolean): Promise<void> {
  await Promise.all([askLoop(ctx, stop), batchLoop(ctx, stop), documentLoop(ctx, stop), searchLoop(ctx, stop)]);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const pick = <T>(r: SeededRandom, xs: readonly T[]): T => xs[r.below(xs.length)]!;

async function askLoop(ctx: WorkloadContext, stop: () => boolean): Promise<void> {
  const r = new SeededRandom(ctx.seed + 1);
  while (!stop()) {
    const op = ctx.history.invoke("ask", { deadlineMs: ctx.askDeadlineMs });
    const gw = pick(r, ctx.gateways);
    await ctx.history.run(op, () => gw.askOnce(pick(r, SOAK_QUESTIONS), ctx.askDeadlineMs, ctx));
    await pause(200 + r.below(800));
  }
}

async function batchLoop(ctx: WorkloadContext, stop: () => boolean): Promise<void> {
  const r = new SeededRandom(ctx.seed + 2);
  const made: string[] = [];
  for (let n = 1; !stop(); n++) {
    const batchId = `soak-${ctx.seed}-b${n}`;
    const webhook = r.next() < 0.5;
    const items = Array.from({ length: 2 + r.below(2) }, (_, i) =>
      BatchItem.fromPartial({ itemId: `i${i}`, request: { question: pick(r, SOAK_QUESTIONS), retrieval: { k: ctx.k }, generation: { maxTokens: ctx.maxTokens } } as Partial<AskRequest> }),
    );
    const args = { batchId, itemIds: items.map((i) => i.itemId), webhook };
    const create = () => {
      const op = ctx.history.invoke("batch.create", args);
      return ctx.history.run(op, () => pick(r, ctx.gateways).createBatch(batchId, items, webhook ? ctx.webhookUrl : undefined, 15_000)).then(() => op.code === "OK");
    };
    // A pipeline whose create failed (the gateway died, NATS was down) sends the same create again; so does one
    // that lost track of it. Neither may make a second batch.
    let ok = await create();
    for (let again = 0; again < 3 && !ok && !stop(); again++) {
      await pause(1_000);
      ok = await create();
    }
    if (ok && r.next() < 0.25) await create();
    made.push(batchId);
    if (ok && r.next() < 0.2) {
      await pause(r.below(1_500));
      const op = ctx.history.invoke("batch.cancel", { batchId });
      await ctx.history.run(op, () => pick(r, ctx.gateways).cancelBatch(batchId, 15_000));
    }
    if (r.next() < 0.4 && made.length > 1) {
      const earlier = made[r.below(made.length - 1)]!;
      const op = ctx.history.invoke("batch.download", { batchId: earlier });
      await ctx.history.run(op, () => pick(r, ctx.gateways).downloadWithResume(earlier));
    }
    await pause(1_000 + r.below(2_000));
  }
}

async function documentLoop(ctx: WorkloadContext, stop: () => boolean): Promise<void> {
  const r = new SeededRandom(ctx.seed + 3);
  for (let n = 1; !stop(); n++) {
    const docId = `soak-doc-${r.below(DOCS)}`;
    const key = `soak-${ctx.seed}-w${n}`;
    if (r.next() < 0.3) {
      const op = ctx.history.invoke("delete", { docId, waitForReplicas: 1 });
      await ctx.history.run(op, async () => ({ found: (await pick(r, ctx.gateways).deleteDocument(docId, 1, key, 30_000)).found }));
    } else {
      const version = `${docId} v${n}`;
      const waitForReplicas = r.below(2);
      const words = Array.from({ length: 40 }, () => pick(r, WORDS)).join(" ");
      const text = `Soak document ${docId}, version ${n}. ${words}.`;
      const op = ctx.history.invoke("ingest", { docId, version, waitForReplicas });
      await ctx.history.run(op, async () => {
        const res = await pick(r, ctx.gateways).ingest(docId, version, text, waitForReplicas, key, 30_000);
        if (res.failed > 0) throw Object.assign(new Error(res.results[0]?.message ?? "ingest failed"), { code: 13 });
        return { status: res.results[0]?.status };
      });
    }
    await pause(300 + r.below(700));
  }
}

async function searchLoop(ctx: WorkloadContext, stop: () => boolean): Promise<void> {
  const r = new SeededRandom(ctx.seed + 4);
  while (!stop()) {
    const query = `${pick(r, WORDS)} ${pick(r, WORDS)}`;
    const op = ctx.history.invoke("search", { query });
    await ctx.history.run(op, async () => ({ docIds: [...new Set(await pick(r, ctx.gateways).search(query, 10, 10_000))] }));
    await pause(300 + r.below(500));
  }
}
