import type { Command } from "commander";
import { NatsIndex } from "@attr-rag/index";
import { ConnectionWatch } from "@attr-rag/nats";
import { serveSelectorOverNats } from "@attr-rag/selector";
import { CliError } from "../cliError.js";
import { addNatsOptions, connectNatsCli, natsOptions, type NatsFlags } from "../natsCli.js";
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
  addNatsOptions(command, true).action(async (o: NatsFlags) => {
    const nats = natsOptions(o, `attr-rag-selector-${process.pid}`);
    if (nats === undefined) throw new CliError("--nats URL is required (or set ATTR_RAG_NATS)");
    const nc = await connectNatsCli(nats);
    try {
      const index = new NatsIndex(nc, new ConnectionWatch(nc));
      const service = await serveSelectorOverNats(nc, index, (line) => process.stderr.write(`attr-rag: ${line}\n`));
      const stop = untilSignal();
      process.stdout.write(`selector ${service.info().id} serving on ${nats.url}\n`);
      const signal = await stop;
      process.stderr.write(`attr-rag: ${signal}: stopping the selector\n`);
      await service.stop();
    } finally {
      await nc.drain().catch(() => nc.close());
    }
  });
}
