// A batch webhook receiver on 127.0.0.1 for the CLI and cluster tests: answers each POST with `answer(n)`
// (n = the deliveries before it) and records what came.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export interface Delivery {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
  readonly body: string;
  readonly answered: number;
}

export async function webhookReceiver(answer: (before: number) => number): Promise<{ url: string; deliveries: Delivery[]; close(): void }> {
  const deliveries: Delivery[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      const answered = answer(deliveries.length);
      const h = (name: string) => String(req.headers[name]);
      deliveries.push({ id: h("webhook-id"), timestamp: h("webhook-timestamp"), signature: h("webhook-signature"), body, answered });
      res.writeHead(answered).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, deliveries, close: () => void server.close() };
}
