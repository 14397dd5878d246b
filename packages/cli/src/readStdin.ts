import { CliError } from "./cliError.js";

/** Reads all of stdin as UTF-8; refuses an interactive terminal so a forgotten pipe does not hang. */
export async function readStdin(stream: NodeJS.ReadStream = process.stdin): Promise<string> {
  if (stream.isTTY) {
    throw new CliError("expected JSON lines on standard input; pipe a file in, e.g. `attr-rag metrics < pairs.jsonl`");
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
  return Buffer.concat(chunks).toString("utf8");
}
