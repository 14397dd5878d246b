import type { KV } from "@nats-io/kv";
import { BatchRecord } from "@attr-rag/contracts";

const recordKey = (batchId: string) => `batch.${batchId}`;
/** `created.<ms, 15 digits>.<id>`: ListBatches orders batches from the keys alone, without reading every record. */
const createdKey = (createdMs: number, batchId: string) => `created.${String(Math.max(0, Math.floor(createdMs))).padStart(15, "0")}.${batchId}`;
/** `webhook.<id>`: the batch has a webhook whose ended event is not queued yet (see JetStreamBatchStore.queueEndedWebhooks). */
const webhookKey = (batchId: string) => `webhook.${batchId}`;
/** Runners ask for a batch's record with every item; a cancel reaches them anyway (broadcast and re-check). */
const CACHE_MS = 2_000;

/** Batch records in the bucket (`batch.<id>`), with a short read cache for the runners. */
export class BatchRecords {
  readonly #cache = new Map<string, { record: BatchRecord | undefined; at: number }>();

  constructor(readonly kv: KV) {}

  async get(batchId: string, o: { fresh?: boolean } = {}): Promise<BatchRecord | undefined> {
    const hit = this.#cache.get(batchId);
    if (!o.fresh && hit !== undefined && Date.now() - hit.at < CACHE_MS) return hit.record;
    const entry = await this.kv.get(recordKey(batchId));
    const record = entry === null || entry.operation !== "PUT" ? undefined : BatchRecord.decode(entry.value);
    this.#cache.set(batchId, { record, at: Date.now() });
    return record;
  }

  /** Creates it unless one exists; returns the record now stored (ours, or the one that was there). */
  async create(record: BatchRecord): Promise<{ record: BatchRecord; created: boolean }> {
    try {
      await this.kv.create(recordKey(record.batchId), BatchRecord.encode(record).finish());
      this.#cache.set(record.batchId, { record, at: Date.now() });
      // Without it (a death just here) the batch is still listed: created() reads such a record itself.
      await this.kv.put(createdKey(Number(record.createdUnixMs), record.batchId), new Uint8Array()).catch(() => {});
      return { record, created: true };
    } catch (err) {
      const existing = await this.get(record.batchId, { fresh: true });
      if (existing === undefined) throw err;
      return { record: existing, created: false };
    }
  }

  /** Read, change, write with the revision read (another gateway's concurrent change makes it try again). */
  async update(batchId: string, change: (r: BatchRecord) => BatchRecord): Promise<BatchRecord | undefined> {
    for (let attempt = 0; ; attempt++) {
      const entry = await this.kv.get(recordKey(batchId));
      if (entry === null || entry.operation !== "PUT") return undefined;
      const next = change(BatchRecord.decode(entry.value));
      try {
        await this.kv.update(recordKey(batchId), BatchRecord.encode(next).finish(), entry.revision);
        this.#cache.set(batchId, { record: next, at: Date.now() });
        return next;
      } catch (err) {
        if (attempt >= 20) throw err;
      }
    }
  }

  /** Marks the batch as one whose webhook event is still to be queued (idempotent). */
  async webhookPending(batchId: string): Promise<void> {
    await this.kv.put(webhookKey(batchId), new Uint8Array());
  }

  /** Ids of the batches marked pending (the keys alone: this is read every second). */
  async pendingWebhooks(): Promise<string[]> {
    const ids: string[] = [];
    for await (const key of await this.kv.keys("webhook.*")) ids.push(key.slice("webhook.".length));
    return ids;
  }

  /** The batch's event is queued (or will never be): no gateway needs to look at it again. */
  async webhookDone(batchId: string): Promise<void> {
    await this.kv.delete(webhookKey(batchId));
  }

  /** Ids of every batch in the bucket. */
  async ids(): Promise<string[]> {
    const ids: string[] = [];
    for await (const key of await this.kv.keys("batch.*")) ids.push(key.slice("batch.".length));
    return ids;
  }

  /**
   * Every batch with its creation time, from two key listings. A record without its `created.` key (made
   * before there were such keys, or whose key expired first: keys expire with their last write) is read.
   */
  async created(): Promise<{ createdMs: number; id: string }[]> {
    const when = new Map<string, number>();
    for await (const key of await this.kv.keys("created.*.*")) {
      const [, ms, id] = key.split(".");
      if (id !== undefined) when.set(id, Number(ms));
    }
    const out: { createdMs: number; id: string }[] = [];
    for (const id of await this.ids()) {
      const createdMs = when.get(id) ?? Number((await this.get(id))?.createdUnixMs ?? Number.NaN);
      if (!Number.isNaN(createdMs)) out.push({ createdMs, id });
    }
    return out;
  }
}
