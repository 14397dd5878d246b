import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CurlReply {
  status: number;
  contentType: string;
  body: Buffer;
}

/**
 * One HTTP request with the system's curl (a client that shares none of our code): `body` is sent as is,
 * the reply's status, content type and raw body come back.
 */
export function curl(url: string, options: { method?: string; body?: Buffer | string; headers?: Record<string, string>; maxTimeS?: number; args?: readonly string[] } = {}): Promise<CurlReply> {
  const dir = mkdtempSync(join(tmpdir(), "attr-rag-curl-"));
  const out = join(dir, "out");
  const args = ["-sS", "-o", out, "-w", "%{http_code} %{content_type}", "-X", options.method ?? "POST", "--max-time", String(options.maxTimeS ?? 120)];
  for (const [name, value] of Object.entries(options.headers ?? {})) args.push("-H", `${name}: ${value}`);
  args.push(...(options.args ?? []));
  if (options.body !== undefined) {
    const file = join(dir, "body");
    writeFileSync(file, options.body);
    args.push("--data-binary", `@${file}`);
  }
  args.push(url);
  return new Promise((resolve, reject) => {
    execFile("curl", args, { encoding: "utf8" }, (err, stdout) => {
      try {
        if (err && !stdout) return reject(err);
        const [code, ...type] = stdout.trim().split(" ");
        resolve({ status: Number(code), contentType: type.join(" "), body: readFileSync(out, { flag: "a+" }) });
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}

/** A Connect streaming request body: one enveloped JSON message (flags 0, big-endian length). */
export function envelope(message: unknown): Buffer {
  return envelopeBytes(Buffer.from(JSON.stringify(message)));
}

/** Any bytes as one Connect envelope (the fuzzer sends broken JSON this way). */
export function envelopeBytes(json: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(json.length, 1);
  return Buffer.concat([head, json]);
}

/** A Connect streaming reply split into its messages and its end-of-stream frame (flags & 2). */
export function unenvelope(body: Buffer): { messages: Record<string, unknown>[]; end: { error?: { code: string; message: string } } | undefined } {
  const messages: Record<string, unknown>[] = [];
  let end: { error?: { code: string; message: string } } | undefined;
  for (let at = 0; at + 5 <= body.length; ) {
    const flags = body[at]!;
    const length = body.readUInt32BE(at + 1);
    const json = JSON.parse(body.subarray(at + 5, at + 5 + length).toString("utf8")) as Record<string, unknown>;
    if (flags & 2) end = json as typeof end;
    else messages.push(json);
    at += 5 + length;
  }
  return { messages, end };
}
