// `attr-rag batch run`: a batch embedded, with no server: the same batch store (batches.sqlite in the state
// dir) and the same runner as a gateway, so a run stopped by Ctrl-C or a crash resumes where it stopped when
// the same command runs again (finished items are never run again, nor written twice).
import { basename } from "node:path";
import type { Batch } from "@attr-rag/contracts";
import { hasEnded, itemsDigest, prepareBatch, SqliteBatchStore, type BatchRunner } from "@attr-rag/batch";
import { batchConcurrencyOf, pipelineBatchRunner, Runtime, type GatewayConfig } from "@attr-rag/gateway";
import { CliError } from "../cliError.js";
import { configFromOptions, gatewayErrorToCli, type ConfigKey } from "../gatewayCli.js";
import { EMBEDDED_KEYS } from "../commands/ask.js";
import { batchItemsFromJsonl, defaultsFromFlags } from "./batchRows.js";
import { finishedOf, progressDetail, stateName } from "./batchProgressText.js";
import { ResultsFile, type ResultsFormat } from "./resultsFile.js";
import { progressBar } from "@attr-rag/telemetry";
import { InputError } from "@attr-rag/core";

export const RUN_KEYS: readonly ConfigKey[] = [...EMBEDDED_KEYS, "stateDir", "batchConcurrency", "maxConcurrentAsks"];

export interface RunBatchOptions {
  readonly file: string;
  readonly text: string;
  readonly out: string;
  /** The results file's lines (default our rows). */
  readonly format?: ResultsFormat;
  readonly id: string | undefined;
  readonly json: boolean;
  readonly options: Record<string, unknown>;
}

export async function runBatchEmbedded(o: RunBatchOptions, signal: AbortSignal): Promise<Batch> {
  const items = batchItemsFromJsonl(o.text, o.file, defaultsFromFlags(o.options));
  const config: GatewayConfig = configFromOptions(o.options, RUN_KEYS);
  // The same file with the same flags is the same batch: running the command again resumes it.
  const batchId = o.id ?? `run-${itemsDigest(items).slice(0, 24)}`;
  const say = (line: string) => {
    if (!o.json) process.stderr.write(`attr-rag: ${line}\n`);
  };
  const out = ResultsFile.open(o.out, o.format ?? "rows");
  const runtime = await Runtime.open(config, say).catch((err: unknown) => {
    out.close();
    throw gatewayErrorToCli(err);
  });
  let store: SqliteBatchStore | undefined;
  let runner: BatchRunner | undefined;
  try {
    const stateDir = config.stateDir ?? config.store;
    try {
      store = SqliteBatchStore.open(stateDir);
    } catch (err) {
      throw new CliError((err as Error).message, 1, { cause: err });
    }
    const { batch, created } = await store.create(prepareBatch({ batchId, items, label: basename(o.file) }, config)).catch((err: unknown) => {
      throw gatewayErrorToCli(err);
    });
    say(
      created
        ? `batch ${batchId}: ${batch.totalItems} items, state in ${stateDir}; stop it any time and run the same command to resume`
        : `batch ${batchId}: resuming, ${finishedOf(batch)} of ${batch.totalItems} done, ${out.count} in ${o.out}`,
    );
    runner = pipelineBatchRunner(runtime, { queue: store.queue, concurrency: Math.max(1, batchConcurrencyOf(config)), log: say }).start();
    const results = (async () => {
      let n = 0;
      for await (const r of store.results(batchId, 0, true, signal)) {
        if (out.append(r) && ++n % 20 === 0) out.sync();
      }
      out.sync();
    })();
    const bar = progressBar(`batch ${batchId}`);
    let last = batch;
    while (!hasEnded(last.state)) {
      if (o.json) process.stdout.write(`${JSON.stringify({ id: batchId, state: stateName(last), total: last.totalItems, ...last.counts, items_per_minute: last.itemsPerMinute, eta_seconds: last.etaSeconds ?? null })}\n`);
      else bar.update(finishedOf(last), last.totalItems, progressDetail(last));
      await store.changed(batchId, 2_000, signal);
      if (signal.aborted) throw new CliError(`interrupted; ${finishedOf(last)} of ${last.totalItems} done. Run the same command again to resume`, 130);
      last = await store.get(batchId);
    }
    bar.done();
    await results;
    say(`batch ${batchId} ${stateName(last)}: ${progressDetail(last)}; ${out.count} results in ${o.out}`);
    return last;
  } catch (err) {
    if (signal.aborted && !(err instanceof InputError)) throw new CliError("interrupted; run the same command again to resume", 130, { cause: err });
    throw err;
  } finally {
    await runner?.stop();
    await store?.close();
    out.close();
    await runtime.dispose();
  }
}
