import type { Command } from "commander";
import { MAX_INDEX_SHARDS } from "@attr-rag/contracts";
import { NatsIndex, ShardedNatsIndex } from "@attr-rag/index";
import { ConnectionWatch } from "@attr-rag/nats";
import { serveSelectorOverNats } from "@attr-rag/selector";
import { CliError } from "../cliError.js";
import { addNatsOptions, connectNatsCli, natsOptions, type NatsFlags } from "../natsCli.js";
import { lineLog, logger, withoutCredentials } from "@attr-rag/telemetry";
import { untilSignal } from "../serverCli.js";

/** `attr-rag selector`: metrics, votes, selection and gap fill as a NATS service. */
export function registerSelectorCommand(program: Command): void {
  const command = program
    .command("selector")
    .summary("serve attribution metrics, selection and gap fill on NATS")
    .description(
      [
        "Serves attr-rag-selector (NATS micro service: $SRV.PING/INFO/STATS answer) in its queue group: scores the",
        "occluded answers with every metric (cosine through the store's embedder, asked of the index service), votes,",
        "selects and fills gaps with chunks fetched from the index. Stateless: run as many as needed.",
      ].join("\n"),
    );
  command.option("--index-shards <n>", "the index is split into this many shards (attr-rag index serve --shard i/S); unset = one index");
  addNatsOptions(command, true).action(async (o: NatsFlags & { indexShards?: string }) => {
    const shards = o.indexShards === undefined ? undefined : parseIndexShards(o.indexShards);
    const nats = natsOptions(o, `attr-rag-selector-${process.pid}`);
    if (nats === undefined) throw new CliError("--nats URL is required (or set ATTR_RAG_NATS)");
    const nc = await connectNatsCli(nats);
    try {
      const watch = new ConnectionWatch(nc);
      const index = shards === undefined ? new NatsIndex(nc, watch) : new ShardedNatsIndex(nc, shards, watch);
      const service = await serveSelectorOverNats(nc, index, lineLog("selector"));
      const stop = untilSignal();
      process.stdout.write(`selector ${service.info().id} serving on ${withoutCredentials(nats.url)}\n`);
      const signal = await stop;
      logger("selector").info(`${signal}: stopping the selector`);
      await service.stop();
    } finally {
      await nc.drain().catch(() => nc.close());
    }
  });
}

function parseIndexShards(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > MAX_INDEX_SHARDS) throw new CliError(`--index-shards must be an integer from 1 to ${MAX_INDEX_SHARDS}, got ${JSON.stringify(text)}`, 2);
  return n;
}
