// What the pipeline commands (ask, serve, demo) share: config flags, config loading and error mapping.
import type { Command } from "commander";
import { CONFIG_KEYS, ConfigError, flagName, loadConfig, USAGE_CODES, type GatewayConfig } from "@attr-rag/gateway";
import { EngineArgumentError, ModelLoadError } from "@attr-rag/engine";
import { ServiceError, storeErrorAsInput } from "@attr-rag/index";
import { NatsConnectError } from "@attr-rag/nats";
import { CliError } from "./cliError.js";

export type ConfigKey = keyof GatewayConfig;

/** Adds `--config FILE` and one `--<flag> <value>` per config key, described from the gateway's table. */
export function addConfigOptions(command: Command, keys: readonly ConfigKey[]): Command {
  command.option("--config <file>", "JSON config file (keys as in docs/asking.md, \"Configuration\"); flags and ATTR_RAG_* env vars override it");
  for (const key of keys) command.option(`--${flagName(key)} <value>`, CONFIG_KEYS[key].help);
  return command;
}

/** Defaults ← --config file ← ATTR_RAG_* env ← flags. */
export function configFromOptions(options: Record<string, unknown>, keys: readonly ConfigKey[]): GatewayConfig {
  const overrides: Record<string, unknown> = {};
  for (const key of keys) if (options[key] !== undefined) overrides[key] = options[key];
  try {
    return loadConfig({ ...(typeof options.config === "string" ? { file: options.config } : {}), env: process.env, overrides });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, 2, { cause: err });
    throw err;
  }
}

/** Pipeline errors as CLI errors: what the user can fix by changing the command exits 2, the rest 1. */
export function gatewayErrorToCli(err: unknown): unknown {
  if (err instanceof ServiceError) return new CliError(err.message, USAGE_CODES.has(err.code) ? 2 : 1, { cause: err });
  if (err instanceof ConfigError || err instanceof ModelLoadError || err instanceof EngineArgumentError || err instanceof NatsConnectError) return new CliError(err.message, 2, { cause: err });
  return storeErrorAsInput(err);
}
