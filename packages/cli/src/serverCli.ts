// What the server commands (index serve, serve) share: port parsing and a clean stop on SIGINT/SIGTERM.
import { CliError } from "./cliError.js";

export function parsePort(value: string, flag = "--port"): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isInteger(n) || n > 65_535) throw new CliError(`${flag} must be an integer from 0 to 65535 (0 picks a free port), got "${value}"`);
  return n;
}

/** Resolves with the first SIGINT/SIGTERM; a second one while shutting down exits at once. */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off("SIGINT", onSignal).off("SIGTERM", onSignal);
      const force = (again: NodeJS.Signals) => {
        process.stderr.write(`attr-rag: ${again} again; exiting without waiting for running calls\n`);
        process.exit(130);
      };
      process.once("SIGINT", force).once("SIGTERM", force);
      resolve(signal);
    };
    process.on("SIGINT", onSignal).on("SIGTERM", onSignal);
  });
}
