// The soak's webhook receiver: records every call (signature checked under the run's secret) and, while faults
// run, sometimes refuses (503) or stalls past the gateway's attempt timeout, as a real receiver does; in the
// recovery window it accepts everything, so every pending event can settle before the check.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { SeededRandom, type WebhookDelivery } from "@attr-rag/core";

export interface WebhookSinkOptions {
  readonly secret: string;
  readonly seed: number;
  readonly refuseShare: number;
  readonly stallShare: number;
  /** How long a stalled answer waits: longer than the gateway's webhookAttemptTimeoutMs. */
  readonly stallMs: number;
  readonly now: () => number;
}

export class WebhookSink {
  readonly deliveries: WebhookDelivery[] = [];
  /** Off in the recovery window: every call is accepted. */
  misbehave = true;
  readonly #server: Server;
  readonly #random: SeededRandom;

  private constructor(readonly o: WebhookSinkOptions) {
    this.#random = new SeededRandom(o.seed ^ 0x5eed);
    this.#server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on("data", (d: Buffer) => parts.push(d));
      req.on("end", () => {
        const body = Buffer.concat(parts);
        const header = (name: string) => String(req.headers[name] ?? "");
        let batchId = "";
        try {
          batchId = String((JSON.parse(body.toString()) as { data?: { id?: string } }).data?.id ?? "");
        } catch {
          // recorded with no batch: an unparseable body is a violation of its own (no valid signature matches it)
        }
        const valid = verify(o.secret, header("webhook-id"), header("webhook-timestamp"), header("webhook-signature"), body);
        const draw = this.#random.next();
        const refuse = this.misbehave && draw < o.refuseShare;
        const stall = this.misbehave && !refuse && draw < o.refuseShare + o.stallShare;
        const record = (status: number) => this.deliveries.push({ atMs: o.now(), batchId, webhookId: header("webhook-id"), validSignature: valid, status });
        if (stall) {
          // The gateway has given up on this attempt by the time the answer comes: it is not an acceptance.
          record(0);
          setTimeout(() => res.writeHead(204).end(), o.stallMs).unref();
          return;
        }
        const status = !valid ? 401 : refuse ? 503 : 204;
        record(status);
        res.writeHead(status).end();
      });
    });
  }

  static async start(o: WebhookSinkOptions): Promise<WebhookSink> {
    const sink = new WebhookSink(o);
    await new Promise<void>((resolve) => sink.#server.listen(0, "127.0.0.1", resolve));
    return sink;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/soak`;
  }

  close(): Promise<void> {
    this.#server.closeAllConnections();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

function verify(secret: string, id: string, stamp: string, signatures: string, body: Buffer): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${stamp}.`).update(body).digest();
  return signatures.split(" ").some((s) => {
    if (!s.startsWith("v1,")) return false;
    const got = Buffer.from(s.slice(3), "base64");
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
