// The soak's checker: every promise docs/batches.md and docs/distributed.md make, checked against one run's
// history (history.ts). Pure, so a history saved as JSON is checked the same way again. Each violation names its
// rule and the operations (and faults) that expose it; the report adds the seed that replays the run.
import { shardOf } from "../retrieval/shardOf.js";
import type { Operation, SoakHistory } from "./history.js";

export const RULES = [
  "no-hang",
  "ask-status",
  "batch-ends",
  "batch-one-result-per-item",
  "batch-created-once",
  "download-resumes",
  "replica-holds-acknowledged",
  "replicas-identical",
  "no-search-after-delete",
  "webhook-signed",
  "webhook-once",
  "webhook-settles",
  "rss-bounded",
] as const;
export type Rule = (typeof RULES)[number];

export interface Violation {
  readonly rule: Rule;
  readonly message: string;
  readonly operationIds: readonly number[];
  readonly faultIds?: readonly number[];
}

/** Statuses an Ask may end with under faults; anything else (INTERNAL, UNKNOWN, …) is a defect. */
export const ASK_STATUSES = new Set(["OK", "DEADLINE_EXCEEDED", "UNAVAILABLE", "RESOURCE_EXHAUSTED", "CANCELLED", "ABORTED"]);
/** How long past its deadline an Ask may take to end (the cancel travelling back). */
export const ASK_GRACE_MS = 5_000;
/** RSS: the last quarter's median may exceed the first quarter's (after warm-up) by this factor plus this much. */
export const RSS_GROWTH = { factor: 1.5, plusBytes: 128 * 2 ** 20 };

export function checkHistory(h: SoakHistory): Violation[] {
  return [...hangsAndAsks(h), ...batches(h), ...downloads(h), ...replicas(h), ...searchesAfterDeletes(h), ...webhooks(h), ...rss(h)];
}

/** A results file resumed from its middle (HTTP Range) must continue the bytes already downloaded. */
function downloads(h: SoakHistory): Violation[] {
  return h.operations
    .filter((op) => op.kind === "batch.download" && op.code === "OK" && op.result?.resumeMatches === false)
    .map((op) => ({ rule: "download-resumes", message: `download #${op.id} of batch ${String(op.args.batchId)}: the part fetched from byte ${String(op.result?.resumedFrom)} does not continue the first download`, operationIds: [op.id] }));
}

function hangsAndAsks(h: SoakHistory): Violation[] {
  const out: Violation[] = [];
  for (const op of h.operations) {
    if (op.endedAtMs === undefined) {
      out.push({ rule: "no-hang", message: `${op.kind} #${op.id} invoked at ${op.invokedAtMs} ms never ended`, operationIds: [op.id] });
      continue;
    }
    if (op.kind !== "ask") continue;
    if (!ASK_STATUSES.has(op.code ?? "")) out.push({ rule: "ask-status", message: `ask #${op.id} ended ${op.code}: ${op.detail ?? ""}`, operationIds: [op.id] });
    const deadline = Number(op.args.deadlineMs);
    if (op.endedAtMs - op.invokedAtMs > deadline + ASK_GRACE_MS) {
      out.push({ rule: "no-hang", message: `ask #${op.id} took ${op.endedAtMs - op.invokedAtMs} ms, past its ${deadline} ms deadline`, operationIds: [op.id] });
    }
  }
  return out;
}

function batches(h: SoakHistory): Violation[] {
  const out: Violation[] = [];
  const creates = new Map<string, Operation[]>();
  for (const op of h.operations) if (op.kind === "batch.create") creates.set(String(op.args.batchId), [...(creates.get(String(op.args.batchId)) ?? []), op]);
  const observed = new Map(h.batches.map((b) => [b.batchId, b]));
  for (const [batchId, ops] of creates) {
    const accepted = ops.filter((o) => o.code === "OK");
    const created = accepted.filter((o) => o.result?.created === true);
    if (created.length > 1) out.push({ rule: "batch-created-once", message: `batch ${batchId} was created ${created.length} times`, operationIds: created.map((o) => o.id) });
    if (accepted.length === 0) continue;
    const b = observed.get(batchId);
    if (b === undefined || b.state === "missing") {
      out.push({ rule: "batch-ends", message: `batch ${batchId} was accepted but is gone`, operationIds: accepted.map((o) => o.id) });
      continue;
    }
    if (b.state !== "completed" && b.state !== "cancelled") out.push({ rule: "batch-ends", message: `batch ${batchId} is still ${b.state} after the recovery window`, operationIds: accepted.map((o) => o.id) });
    const items = (accepted[0]!.args.itemIds as readonly string[] | undefined) ?? [];
    const seen = new Map<string, number>();
    for (const id of b.resultItemIds) seen.set(id, (seen.get(id) ?? 0) + 1);
    const doubled = [...seen].filter(([, n]) => n > 1).map(([id, n]) => `${id} (${n} results)`);
    const missing = items.filter((id) => !seen.has(id));
    const foreign = [...seen.keys()].filter((id) => !items.includes(id));
    if (doubled.length + foreign.length > 0 || (missing.length > 0 && b.state !== "running")) {
      const parts = [doubled.length > 0 ? `more than one result for ${doubled.join(", ")}` : "", missing.length > 0 ? `no result for ${missing.join(", ")}` : "", foreign.length > 0 ? `results for items it never had: ${foreign.join(", ")}` : ""];
      out.push({ rule: "batch-one-result-per-item", message: `batch ${batchId}: ${parts.filter(Boolean).join("; ")}`, operationIds: accepted.map((o) => o.id) });
    }
  }
  return out;
}

/** What each replica of a document's shard may hold for it: the last acknowledged write, or a later unacknowledged one. */
function allowedVersions(h: SoakHistory): Map<string, { allowed: Set<string | undefined>; ops: number[] }> {
  const byDoc = new Map<string, Operation[]>();
  for (const op of h.operations) if (op.kind === "ingest" || op.kind === "delete") byDoc.set(String(op.args.docId), [...(byDoc.get(String(op.args.docId)) ?? []), op]);
  const out = new Map<string, { allowed: Set<string | undefined>; ops: number[] }>();
  for (const [docId, ops] of byDoc) {
    const effect = (op: Operation) => (op.kind === "delete" ? undefined : String(op.args.version));
    const lastOk = ops.map((o) => o.code === "OK").lastIndexOf(true);
    // Before any acknowledged write the document may be absent, or hold any attempted version.
    const allowed = new Set<string | undefined>(lastOk < 0 ? [undefined] : [effect(ops[lastOk]!)]);
    for (const op of ops.slice(lastOk + 1)) allowed.add(effect(op));
    out.set(docId, { allowed, ops: ops.map((o) => o.id) });
  }
  return out;
}

function replicas(h: SoakHistory): Violation[] {
  const out: Violation[] = [];
  const expected = allowedVersions(h);
  for (const r of h.replicas) {
    for (const [docId, { allowed, ops }] of expected) {
      const ours = shardOf(docId, h.shards) === r.shard;
      const stray = !ours && r.documents[docId] !== undefined;
      if (stray || (ours && !allowed.has(r.documents[docId]))) {
        const want = [...allowed].map((v) => v ?? "nothing").join(" or ");
        out.push({ rule: "replica-holds-acknowledged", message: `replica ${r.shard}.${r.replica} holds ${r.documents[docId] ?? "nothing"} for ${docId}; expected ${stray ? "nothing (another shard's document)" : want}`, operationIds: ops });
      }
    }
  }
  const byShard = new Map<number, typeof h.replicas>();
  for (const r of h.replicas) byShard.set(r.shard, [...(byShard.get(r.shard) ?? []), r]);
  for (const [shard, rs] of byShard) {
    if (new Set(rs.map((r) => r.digest)).size > 1) out.push({ rule: "replicas-identical", message: `shard ${shard}'s replicas differ: ${rs.map((r) => `${r.replica}: ${r.digest.slice(0, 12)}`).join(", ")}`, operationIds: [] });
  }
  return out;
}

function searchesAfterDeletes(h: SoakHistory): Violation[] {
  const out: Violation[] = [];
  const searches = h.operations.filter((o) => o.kind === "search" && o.code === "OK");
  for (const del of h.operations) {
    if (del.kind !== "delete" || del.code !== "OK" || del.endedAtMs === undefined) continue;
    const docId = String(del.args.docId);
    // Until the document is written again (an ingest invoked later, acknowledged or not).
    const next = h.operations.find((o) => o.kind === "ingest" && o.args.docId === docId && o.invokedAtMs > del.invokedAtMs);
    for (const s of searches) {
      if (s.invokedAtMs < del.endedAtMs || (next !== undefined && s.endedAtMs! >= next.invokedAtMs)) continue;
      if (((s.result?.docIds as readonly string[] | undefined) ?? []).includes(docId)) {
        out.push({ rule: "no-search-after-delete", message: `search #${s.id} returned ${docId}, deleted by #${del.id} (acknowledged before the search began)`, operationIds: [del.id, s.id] });
      }
    }
  }
  return out;
}

function webhooks(h: SoakHistory): Violation[] {
  const out: Violation[] = [];
  const withWebhook = new Map<string, number[]>();
  for (const op of h.operations) if (op.kind === "batch.create" && op.args.webhook === true) withWebhook.set(String(op.args.batchId), [...(withWebhook.get(String(op.args.batchId)) ?? []), op.id]);
  for (const d of h.webhooks) {
    if (!d.validSignature) out.push({ rule: "webhook-signed", message: `a webhook call for batch ${d.batchId} at ${d.atMs} ms had no valid signature`, operationIds: withWebhook.get(d.batchId) ?? [] });
  }
  for (const b of h.batches) {
    const ops = withWebhook.get(b.batchId);
    if (ops === undefined || b.webhookState === undefined) continue;
    const calls = h.webhooks.filter((d) => d.batchId === b.batchId && d.validSignature);
    const accepted = calls.filter((d) => d.status >= 200 && d.status < 300);
    if (new Set(calls.map((d) => d.webhookId)).size > 1) out.push({ rule: "webhook-once", message: `batch ${b.batchId}'s end was sent as ${new Set(calls.map((d) => d.webhookId)).size} different events`, operationIds: ops });
    if (accepted.length > 1) {
      // A second accepted call is allowed only when a gateway (or NATS) died or froze between the two: the
      // receiver's answer can be lost with the process that was about to record it.
      const first = accepted[0]!.atMs;
      const last = accepted.at(-1)!.atMs;
      const excuse = h.faults.filter((f) => (f.target.startsWith("gateway") || f.target === "nats") && f.atMs >= first - 10_000 && f.atMs <= last);
      if (excuse.length === 0) out.push({ rule: "webhook-once", message: `batch ${b.batchId}'s webhook was accepted ${accepted.length} times with no gateway fault between`, operationIds: ops });
    }
    const endedAt = b.endedAtMs ?? Number.POSITIVE_INFINITY;
    if (b.webhookState === "delivered" && accepted.length === 0) out.push({ rule: "webhook-settles", message: `batch ${b.batchId}'s webhook is marked delivered, but the receiver never accepted it`, operationIds: ops });
    if (b.webhookState === "gave_up" && (accepted.length > 0 || h.observedAtMs - endedAt < h.webhookRetryForMs)) {
      out.push({ rule: "webhook-settles", message: `batch ${b.batchId}'s webhook was given up ${accepted.length > 0 ? "after the receiver accepted it" : "inside its retry window"}`, operationIds: ops });
    }
    if ((b.webhookState === "sending" || b.webhookState === "waiting") && h.observedAtMs - endedAt > h.webhookSettleMs) {
      out.push({ rule: "webhook-settles", message: `batch ${b.batchId} ended ${Math.round((h.observedAtMs - endedAt) / 1000)} s before the check, and its webhook is still ${b.webhookState}`, operationIds: ops });
    }
  }
  return out;
}

function rss(h: SoakHistory): Violation[] {
  const out: Violation[] = [];
  for (const [name, { early, late }] of rssQuarters(h.rss)) {
    if (late > early * RSS_GROWTH.factor + RSS_GROWTH.plusBytes) {
      out.push({ rule: "rss-bounded", message: `${name} grew from ${mib(early)} to ${mib(late)} MiB (median of the first and last quarter after warm-up)`, operationIds: [] });
    }
  }
  return out;
}

/**
 * Each process's resident memory as rss-bounded reads it: the median bytes of the first and of the last quarter
 * of its samples after the first fifth (warm-up), restarts included; processes with under 8 such samples are
 * left out (too short to tell growth from start-up).
 */
export function rssQuarters(samples: SoakHistory["rss"]): Map<string, { samples: number; early: number; late: number }> {
  const byProcess = new Map<string, number[]>();
  for (const s of [...samples].sort((a, b) => a.atMs - b.atMs)) {
    const list = byProcess.get(s.process) ?? [];
    list.push(s.bytes);
    byProcess.set(s.process, list);
  }
  const out = new Map<string, { samples: number; early: number; late: number }>();
  for (const [name, list] of byProcess) {
    const settled = list.slice(Math.floor(list.length / 5));
    if (settled.length < 8) continue;
    const quarter = Math.floor(settled.length / 4);
    out.set(name, { samples: list.length, early: median(settled.slice(0, quarter)), late: median(settled.slice(-quarter)) });
  }
  return out;
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

function mib(bytes: number): string {
  return (bytes / 2 ** 20).toFixed(0);
}
