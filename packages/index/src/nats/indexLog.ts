import { RetentionPolicy, StorageType, type JetStreamManager } from "@nats-io/jetstream";
import { INDEX_LOG_STREAM, INDEX_LOG_STREAM_SUBJECTS } from "@attr-rag/contracts";
import { ensureStream } from "@attr-rag/nats";

/** The header naming a log entry (also its JetStream Nats-Msg-Id): the applied notes for it go to indexAppliedSubject(…, id). */
export const ENTRY_HEADER = "Attr-Rag-Entry";

/**
 * A publish repeated within this window (the writer retrying after a lost ack) is stored once: JetStream
 * de-duplicates by the entry id.
 */
const DUPLICATE_WINDOW_NS = 2 * 60 * 1_000_000_000;

/**
 * Creates the ingest log unless it exists. Limits retention with no limits: every entry stays until an operator
 * trims the stream (a new replica then starts from another replica's snapshot, see IndexLogFollower).
 */
export async function ensureIndexLog(jsm: JetStreamManager): Promise<void> {
  await ensureStream(jsm, {
    name: INDEX_LOG_STREAM,
    subjects: [...INDEX_LOG_STREAM_SUBJECTS],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    duplicate_window: DUPLICATE_WINDOW_NS,
  });
}
