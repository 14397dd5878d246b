/**
 * Which shard holds a document: FNV-1a (32-bit) of the id's UTF-8 bytes, modulo the shard count. A document's
 * chunks all live in one shard (alignment reads a document's consecutive chunks from one store), and the
 * function never changes, so every process routing a document id (gateway, selector, `attr-rag ingest
 * --shard`) sends it to the same shard. Changing the shard count moves documents: that is a re-ingest.
 */
export function shardOf(docId: string, shards: number): number {
  if (!Number.isInteger(shards) || shards < 1) throw new RangeError(`the shard count must be an integer ≥ 1, got ${shards}`);
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(docId)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** One shard of S, as `--shard i/S` writes it. */
export interface ShardSpec {
  readonly shard: number;
  readonly shards: number;
}

/** Parses `i/S` (0 ≤ i < S ≤ max); the message says what was wrong and what a good value looks like. */
export function parseShardSpec(text: string, max: number): ShardSpec {
  const m = /^\s*(\d+)\s*\/\s*(\d+)\s*$/.exec(text);
  if (m === null) throw new RangeError(`--shard must be i/S (this process serves shard i of S, counted from 0), e.g. 0/2; got ${JSON.stringify(text)}`);
  const shard = Number(m[1]);
  const shards = Number(m[2]);
  if (shards < 1 || shards > max) throw new RangeError(`--shard ${text}: the shard count S must be from 1 to ${max}`);
  if (shard >= shards) throw new RangeError(`--shard ${text}: shards are counted from 0, so i must be below S (0 to ${shards - 1})`);
  return { shard, shards };
}
