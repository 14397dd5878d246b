import type { Command } from "commander";
import { CONFIG_KEYS, Runtime, startGatewayServer, type GatewayServerHandle } from "@attr-rag/gateway";
import { CONSOLE_DIR } from "@attr-rag/web";
import { CliError } from "../cliError.js";
import { addConfigOptions, configFromOptions, gatewayErrorToCli, type ConfigKey } from "../gatewayCli.js";
import { lineLog, logger, withoutCredentials } from "@attr-rag/telemetry";
import { parsePort, untilSignal } from "../serverCli.js";

const ALL_KEYS = Object.keys(CONFIG_KEYS) as ConfigKey[];

/** `attr-rag serve`: the gateway (AttrRagService, IndexService, health, reflection) until SIGINT/SIGTERM. */
export function registerServeCommand(program: Command): void {
  const command = program
    .command("serve")
    .summary("serve the Attr-RAG pipeline over gRPC")
    .description(
      [
        "Serves attr_rag.v1.AttrRagService (Ask, Attribute), attr_rag.v1.IndexService over the same store,",
        "grpc.health.v1.Health and server reflection on one port. With --nats (distributed mode) there is no store",
        "or model here: retrieval, the engine and selection go over NATS to `attr-rag index serve --nats`,",
        "`attr-rag worker` and `attr-rag selector`. Prints `listening on HOST:PORT` once it accepts",
        "calls. With --http-port the same services also answer HTTP/JSON (the Connect protocol: POST",
        "/attr_rag.v1.AttrRagService/Attribute with a JSON body works from curl) and the web console is at",
        "http://HOST:HTTP_PORT/. On SIGINT/SIGTERM it reports NOT_SERVING, lets running calls finish (up to 5 s) and closes everything.",
        "Every setting can also come from --config FILE or ATTR_RAG_* environment variables (docs/asking.md, \"Configuration\").",
      ].join("\n"),
    )
    .option("--host <host>", "address to bind", "127.0.0.1")
    .option("--port <n>", "port to bind, 0 for a free one", "50051")
    .option("--http-port <n>", "also serve HTTP/JSON and the web console on this port (0: a free one); off unless given")
    .option("--cors-origin <origin...>", 'origins allowed to call the HTTP port from a browser page elsewhere ("*": any); default none')
    .option("--allowed-host <name...>", "without an auth token, host names besides loopback ones that HTTP requests may carry (a proxy's); default none");
  addConfigOptions(command, ALL_KEYS).action(async (o: Record<string, unknown> & { host: string; port: string; httpPort?: string; corsOrigin?: string[]; allowedHost?: string[] }) => {
    const port = parsePort(o.port);
    const httpPort = o.httpPort === undefined ? undefined : parsePort(o.httpPort, "--http-port");
    if (o.host.trim() === "") throw new CliError("--host is empty");
    const config = configFromOptions(o, ALL_KEYS);
    const runtime = await Runtime.open(config, lineLog("gateway")).catch((err: unknown) => {
      throw gatewayErrorToCli(err);
    });
    let server: GatewayServerHandle | undefined;
    try {
      server = await startGatewayServer({ runtime, host: o.host, port, httpPort, consoleDir: CONSOLE_DIR, corsOrigins: o.corsOrigin, allowedHosts: o.allowedHost }).catch((err: unknown) => {
        throw new CliError((err as Error).message, 1, { cause: err });
      });
      const stopped = untilSignal();
      logger("gateway").info(
        `serving ${config.nats !== undefined ? `over NATS at ${withoutCredentials(config.nats)} (model ${config.model})` : `${config.store} with ${config.model}`}` +
          `${server.tls ? " over TLS" : ""}${config.authToken !== undefined ? " (bearer token required)" : ""}; ` +
          `at most ${config.maxConcurrentAsks} asks at once, ${config.maxQueuedAsks} queued`,
      );
      process.stdout.write(`listening on ${server.address}\n`);
      if (server.http !== undefined) process.stdout.write(`http on ${server.http.address} (web console: http${server.tls ? "s" : ""}://${server.http.address}/)\n`);
      const signal = await stopped;
      logger("gateway").info(`${signal}: stopping the gateway`);
      await server.close();
      logger("gateway").info("stopped");
    } finally {
      // A failure while stopping must not hide the stop itself (or an earlier error) behind a stack trace.
      await (server !== undefined ? server.close() : runtime.dispose()).catch((err: unknown) => {
        logger("gateway").warn(`while stopping: ${(err as Error).message}`);
      });
    }
  });
}
