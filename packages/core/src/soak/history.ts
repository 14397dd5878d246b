// What a soak run did and saw: every operation the workload invoked (with when it ended and how), and what the
// run observed once the faults stopped and the cluster recovered. The checker (checkHistory.ts) reads only this,
// so a history written to JSON can be checked again, and a defect shows up as the operations that exposed it.

export type OperationKind =
  | "ask"
  | "batch.create"
  | "batch.cancel"
  | "batch.download"
  | "ingest"
  | "delete"
  | "search";

export interface Operation {
  /** 1-based, in invocation order. */
  readonly id: number;
  readonly kind: OperationKind;
  /** Milliseconds after the run started. */
  readonly invokedAtMs: number;
  /** Unset: the operation had not ended when the run stopped waiting for it (a hang). */
  endedAtMs?: number;
  /** The gRPC status code name it ended with ("OK", "UNAVAILABLE", …), or "HTTP 503" and such for downloads. */
  code?: string;
  detail?: string;
  /** ask: deadlineMs. batch.*: batchId, itemIds (create), webhook (boolean). ingest/delete: docId, version
   *  (ingest: what the replicas must then hold for it), waitForReplicas. search: query. */
  readonly args: Readonly<Record<string, unknown>>;
  /** batch.create: created (boolean). search: docIds returned. download: digest of the bytes, resumedFrom. */
  result?: Readonly<Record<string, unknown>>;
}

/** One POST the webhook receiver got, with what it answered. */
export interface WebhookDelivery {
  readonly atMs: number;
  readonly batchId: string;
  readonly webhookId: string;
  /** The Standard Webhooks signature checked out under the run's secret. */
  readonly validSignature: boolean;
  /** The receiver's answer: 2xx accepted it; anything else (or a stall past the gateway's timeout) refused it. */
  readonly status: number;
}

export interface BatchObserved {
  readonly batchId: string;
  /** "completed", "cancelled", "running", … as GetBatch says after the recovery window; "missing" if NOT_FOUND. */
  readonly state: string;
  /** The item id of every result ListBatchResults returned, in offset order. */
  readonly resultItemIds: readonly string[];
  /** GetBatch's webhook delivery state ("delivered", "gave_up", "sending", …), if the batch has a webhook. */
  readonly webhookState?: string;
  /** When the batch ended (its finished time), ms after the run started. */
  readonly endedAtMs?: number;
}

export interface ReplicaObserved {
  readonly shard: number;
  readonly replica: number;
  /** Every document the replica holds: id → the version the workload wrote into it (its title). */
  readonly documents: Readonly<Record<string, string>>;
  /** Digest of everything the replica stores (every chunk's text and vector, in id order). */
  readonly digest: string;
}

export interface RssSample {
  readonly process: string;
  readonly atMs: number;
  readonly bytes: number;
}

export interface SoakHistory {
  readonly seed: number;
  readonly operations: readonly Operation[];
  /** The faults applied, as scheduled (faultSchedule.ts), with when each actually began. */
  readonly faults: readonly { readonly id: number; readonly kind: string; readonly target: string; readonly atMs: number; readonly durationMs: number }[];
  readonly webhooks: readonly WebhookDelivery[];
  readonly batches: readonly BatchObserved[];
  readonly replicas: readonly ReplicaObserved[];
  readonly shards: number;
  readonly rss: readonly RssSample[];
  /** When the checks' observations were taken, ms after the run started. */
  readonly observedAtMs: number;
  /** The gateway's webhookRetryFor, ms: a webhook given up earlier than this after its batch ended is a violation. */
  readonly webhookRetryForMs: number;
  /** A batch that ended this long before the observation must have its webhook settled (delivered or given up). */
  readonly webhookSettleMs: number;
}
