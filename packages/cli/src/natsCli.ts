// The NATS options every distributed role takes (worker, selector, index serve --nats), each also read from
// its ATTR_RAG_* environment variable, and the connection with errors that name the option to fix.
import type { Command } from "commander";
import { connectNats, NatsConnectError, roleNatsWaitMs, type NatsClientOptions, type NatsConnection } from "@attr-rag/nats";
import { CliError } from "./cliError.js";

export interface NatsFlags {
  nats?: string;
  natsCreds?: string;
  natsUser?: string;
  natsPass?: string;
  natsToken?: string;
  natsNkey?: string;
  natsTlsCa?: string;
}

export function addNatsOptions(command: Command, required: boolean): Command {
  return command
    .option("--nats <url>", `NATS server URL(s), comma-separated${required ? " (required; or $ATTR_RAG_NATS)" : ""}`)
    .option("--nats-creds <file>", "NATS .creds file (JWT and nkey seed)")
    .option("--nats-user <user>", "NATS user (with --nats-pass)")
    .option("--nats-pass <password>", "NATS password (or $ATTR_RAG_NATS_PASS)")
    .option("--nats-token <token>", "NATS token (or $ATTR_RAG_NATS_TOKEN)")
    .option("--nats-nkey <file>", "file holding a NATS nkey seed")
    .option("--nats-tls-ca <file>", "PEM CA certificate: connect to NATS with TLS");
}

/** The options as given, else from the environment (so secrets need not be on the command line). */
export function natsOptions(o: NatsFlags, name: string): NatsClientOptions | undefined {
  const env = process.env;
  const pick = (flag: string | undefined, variable: string) => flag ?? (env[variable] !== undefined && env[variable] !== "" ? env[variable] : undefined);
  const url = pick(o.nats, "ATTR_RAG_NATS");
  if (url === undefined) return undefined;
  return {
    url,
    name,
    creds: pick(o.natsCreds, "ATTR_RAG_NATS_CREDS"),
    user: pick(o.natsUser, "ATTR_RAG_NATS_USER"),
    pass: pick(o.natsPass, "ATTR_RAG_NATS_PASS"),
    token: pick(o.natsToken, "ATTR_RAG_NATS_TOKEN"),
    nkey: pick(o.natsNkey, "ATTR_RAG_NATS_NKEY"),
    tlsCa: pick(o.natsTlsCa, "ATTR_RAG_NATS_TLS_CA"),
  };
}

/** A role's connection: it waits for a server that cannot be reached yet, saying so on stderr. */
export async function connectNatsCli(options: NatsClientOptions): Promise<NatsConnection> {
  try {
    return await connectNats({ waitForServerMs: roleNatsWaitMs(), onWaiting: (m) => process.stderr.write(`attr-rag: ${m}\n`), ...options });
  } catch (err) {
    if (err instanceof NatsConnectError) throw new CliError(err.message, 2, { cause: err });
    throw err;
  }
}
