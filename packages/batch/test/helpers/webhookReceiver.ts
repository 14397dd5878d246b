// A webhook receiver for the tests, and Standard Webhooks verification written from the spec with WebCrypto
// (none of the gateway's code), so a signing bug cannot hide behind the same bug in the check.
import { webcrypto } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Delivery {
  headers: Record<string, string>;
  body: string;
  answered: number;
  /** When it arrived (Date.now()). */
  atMs: number;
}

/** A receiver on 127.0.0.1 that answers `answer()` (a status code) and records every delivery. */
export async function receiver(answer: () => number): Promise<{ url: string; deliveries: Delivery[]; server: Server }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const code = answer();
      deliveries.push({ headers: req.headers as Record<string, string>, body, answered: code, atMs: Date.now() });
      res.writeHead(code).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/attr-rag`, deliveries, server };
}

/** A request to the trickling receiver: open until the client lets go. */
export interface HeldRequest {
  readonly startedMs: number;
  closed: boolean;
}

/**
 * A receiver on 127.0.0.1 that answers 200 with its headers at once and then a byte every `everyMs`, never
 * ending: only a deadline on the whole attempt frees the sender. After `release()` it answers 200 at once.
 */
export async function trickler(everyMs = 200): Promise<{ url: string; requests: HeldRequest[]; answered: () => number; release(): void; close(): void }> {
  const requests: HeldRequest[] = [];
  let releasedAnswers = 0;
  let released = false;
  const server = createServer((req, res) => {
    req.resume();
    if (released) {
      releasedAnswers++;
      res.writeHead(200).end();
      return;
    }
    const held: HeldRequest = { startedMs: Date.now(), closed: false };
    requests.push(held);
    res.writeHead(200, { "content-type": "text/plain" });
    res.write(".");
    const drip = setInterval(() => res.write("."), everyMs);
    res.on("close", () => {
      clearInterval(drip);
      held.closed = true;
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/slow`,
    requests,
    answered: () => releasedAnswers,
    release: () => void (released = true),
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/** Whether the delivery's webhook-signature is the HMAC-SHA256 of `id.timestamp.body` under `secret` ("whsec_…"). */
export async function verifies(secret: string, d: Delivery): Promise<boolean> {
  const key = await webcrypto.subtle.importKey("raw", Buffer.from(secret.slice("whsec_".length), "base64"), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const [version, signature] = d.headers["webhook-signature"]!.split(",");
  const signed = new TextEncoder().encode(`${d.headers["webhook-id"]}.${d.headers["webhook-timestamp"]}.${d.body}`);
  return version === "v1" && (await webcrypto.subtle.verify("HMAC", key, Buffer.from(signature!, "base64"), signed));
}
