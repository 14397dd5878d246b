import type { Command } from "commander";
import { snapshotStore, storeErrorAsInput } from "@attr-rag/index";

/**
 * `attr-rag index snapshot`: a copy of a store (a running replica's included) to start a new replica from,
 * when the ingest log no longer reaches back to the beginning.
 */
export function registerIndexSnapshotCommand(program: Command): void {
  const group =
    program.commands.find((c) => c.name() === "index") ??
    program.command("index").summary("index commands (serve the store over gRPC)").description("Commands that work on one index store.");
  group
    .command("snapshot")
    .summary("copy a store (a running replica's too) to start a new replica from")
    .description(
      [
        "Copies the store in --store into --out (a new directory) with SQLite's online backup, so the replica serving it",
        "keeps running. A replica started on the copy (index serve --store OUT --shard i/S) is a new replica of the same",
        "shard: it applies the ingest log from the entry after the snapshot's last one. Use it when the log was trimmed",
        "and no longer holds every entry from the beginning (index serve then says so).",
      ].join("\n"),
    )
    .requiredOption("--store <dir>", "the store to copy")
    .requiredOption("--out <dir>", "a new (or empty) directory for the copy")
    .action(async (o: { store: string; out: string }) => {
      const snapshot = await snapshotStore(o.store, o.out).catch((err: unknown) => {
        throw storeErrorAsInput(err);
      });
      process.stdout.write(
        `snapshot of ${o.store} in ${o.out}: ${snapshot.documents} documents${snapshot.shard !== undefined ? `, shard ${snapshot.shard}, ingest log applied up to ${snapshot.applied}` : ""}\n`,
      );
    });
}
