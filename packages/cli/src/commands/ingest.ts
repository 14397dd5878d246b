import type { Command } from "commander";
import { ChunkStore, DEFAULT_MAX_FILE_BYTES, measureSources, readDocuments, startEmbedder, storeErrorAsInput, type Embedder, type UpsertStatus } from "@attr-rag/index";
import { CliError } from "../cliError.js";
import { cliShardSpec, parseQuantization, positiveInt } from "../parseArgs.js";
import { shardOf, type ShardSpec } from "@attr-rag/core";
import { progressBar } from "@attr-rag/telemetry";

interface IngestOptions {
  store: string;
  embedder: string;
  maxChars?: string;
  quantization?: string;
  maxFileMb?: string;
  shard?: string;
  json?: boolean;
}

type Counts = Record<UpsertStatus | "skipped" | "failed", number>;

export function registerIngestCommand(program: Command): void {
  program
    .command("ingest")
    .summary("add documents (.jsonl corpus, .txt, .md, .pdf, folders) to a store")
    .description(
      [
        "Reads every PATH (files, or folders recursively; hidden files and other types are skipped and listed),",
        "chunks and embeds each document and writes it to the store in --store (created when missing).",
        "A document whose text is unchanged is not re-embedded; a changed one replaces its old chunks atomically.",
        "Progress goes to stderr, then one summary line (JSON with --json) to stdout. A file that cannot be read",
        "is reported and the rest are still ingested; the exit code is then 1.",
      ].join("\n"),
    )
    .argument("<paths...>", "files or folders to ingest")
    .requiredOption("--store <dir>", "store directory (created when missing)")
    .option("--embedder <spec>", "use-lite | gguf:/path/to/model.gguf (must match the store's)", "use-lite")
    .option("--max-chars <n>", "largest chunk in characters, fixed when the store is created (default 1000)")
    .option("--quantization <type>", "vector element type, f16 | f32, fixed when the store is created (default f16)")
    .option("--max-file-mb <n>", "refuse files larger than this", String(DEFAULT_MAX_FILE_BYTES / 1024 / 1024))
    .option("--shard <i/S>", "keep only the documents of shard i of S (a sharded index's store, served with index serve --shard i/S)")
    .option("--json", "print the summary as JSON")
    .action(async (paths: string[], o: IngestOptions) => {
      const shard = o.shard === undefined ? undefined : cliShardSpec(o.shard);
      const maxChars = o.maxChars === undefined ? undefined : positiveInt("--max-chars", o.maxChars);
      const quantization = parseQuantization(o.quantization);
      const maxFileBytes = positiveInt("--max-file-mb", o.maxFileMb ?? "200") * 1024 * 1024;
      const embedder = await startEmbedder(o.embedder);
      try {
        const store = await ChunkStore.open(o.store, {
          create: true,
          embedder: { id: embedder.id, dimensions: embedder.dimensions },
          embed: (texts) => embedder.embed(texts),
          ...(maxChars ? { chunker: { maxChars } } : {}),
          ...(quantization ? { quantization } : {}),
        }).catch((err: unknown) => {
          throw storeErrorAsInput(err);
        });
        try {
          // A store that follows an ingest log changes only through it; one that holds a shard only by --shard.
          try {
            store.replica.assertNotFollowing("attr-rag ingest", store.path);
            if (shard === undefined) store.replica.assertUnsharded("plain ingest", store.path, "Ingest with --shard {shard}.");
            else store.replica.claimShard(shard.shard, shard.shards, store.path);
          } catch (err) {
            throw storeErrorAsInput(err);
          }
          const counts = await ingestPaths(store, embedder, paths, maxFileBytes, shard);
          const stats = store.stats();
          await store.close();
          const summary = { ...counts, ...(shard !== undefined ? { shard: `${shard.shard}/${shard.shards}` } : {}), store: { documents: stats.documents, chunks: stats.chunks } };
          if (o.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
          else {
            process.stdout.write(
              `indexed ${counts.indexed}, replaced ${counts.replaced}, unchanged ${counts.unchanged}, updated ${counts.updated}, ` +
                `skipped ${counts.skipped}, failed ${counts.failed}${shard !== undefined ? `, other shards' ${counts.otherShards}` : ""}; ${counts.chunks} chunks written; ` +
                `store ${store.path} holds ${stats.documents} documents, ${stats.chunks} chunks\n`,
            );
          }
          if (counts.failed > 0) throw new CliError(`${counts.failed} file(s) or document(s) failed (listed above); the rest were ingested`, 1);
        } finally {
          await store.close();
        }
      } finally {
        await embedder.dispose();
      }
    });
}

async function ingestPaths(store: ChunkStore, embedder: Embedder, paths: string[], maxFileBytes: number, shard?: ShardSpec): Promise<Counts & { chunks: number; otherShards: number }> {
  const counts = { indexed: 0, replaced: 0, unchanged: 0, updated: 0, skipped: 0, failed: 0, chunks: 0, otherShards: 0 };
  const total = await measureSources(paths);
  const bar = progressBar("ingest");
  let bytesBefore = 0;
  let currentFile = "";
  let currentSize = 0;
  const documents = readDocuments(paths, {
    maxFileBytes,
    onSkip: (s) => {
      counts.skipped++;
      process.stderr.write(`skipped ${s.file}${s.id ? ` (${s.id})` : ""}: ${s.reason}\n`);
    },
    onError: (err) => {
      counts.failed++;
      process.stderr.write(`failed ${err.message}\n`);
    },
  });
  for await (const item of documents) {
    if (item.file !== currentFile) {
      bytesBefore += currentSize;
      currentFile = item.file;
      currentSize = item.fileSize;
    }
    try {
      if (shard !== undefined && shardOf(item.document.id, shard.shards) !== shard.shard) counts.otherShards++;
      else {
        const result = await store.upsertDocument(item.document, (texts) => embedder.embed(texts));
        counts[result.status]++;
        if (result.status === "indexed" || result.status === "replaced") counts.chunks += result.chunkCount;
      }
    } catch (err) {
      counts.failed++;
      process.stderr.write(`failed ${item.file} (${item.document.id}): ${(err as Error).message}\n`);
    }
    const done = counts.indexed + counts.replaced + counts.unchanged + counts.updated;
    bar.update(Math.round((bytesBefore + item.bytesRead) / 1024), Math.max(1, Math.round(total.bytes / 1024)), `KB, ${done} documents`);
  }
  bar.done();
  return counts;
}
