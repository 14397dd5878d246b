// buf curl: a strict gRPC client that knows nothing of our code and builds every message from the server's
// reflection. Async, because the server under test shares this process's event loop.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { promisify } from "node:util";

export const BUF = join(dirname(createRequire(import.meta.url).resolve("@bufbuild/buf/package.json")), "bin", "buf");

export async function bufCurl(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [BUF, "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args], { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

/** buf curl prints each message of a stream as one pretty JSON object; top-level objects start at column 0. */
export function jsonMessages(stdout: string): unknown[] {
  const text = stdout.trim();
  return text === "" ? [] : text.split(/^(?=\{)/m).map((part) => JSON.parse(part));
}
