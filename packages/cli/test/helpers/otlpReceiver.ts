// An OTLP/HTTP trace receiver for the tests: what a collector would get from our processes' exporters
// (POST /v1/traces, OTLP JSON), flattened to one record per span with its service's name.
import { createServer, type Server } from "node:http";

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  links: { traceId: string; spanId: string }[];
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpJson {
  resourceSpans?: {
    resource?: { attributes?: { key: string; value: OtlpValue }[] };
    scopeSpans?: { spans?: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind?: number; startTimeUnixNano: string; endTimeUnixNano: string; attributes?: { key: string; value: OtlpValue }[]; links?: { traceId: string; spanId: string }[] }[] }[];
  }[];
}

const valueOf = (v: OtlpValue): unknown => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined) ?? v.doubleValue ?? v.boolValue;

export class OtlpReceiver implements AsyncDisposable {
  readonly spans: ReceivedSpan[] = [];
  /** Requests that were not OTLP JSON (the test fails on any). */
  readonly refused: string[] = [];

  private constructor(
    private readonly server: Server,
    readonly endpoint: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let receiver: OtlpReceiver | undefined;
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks).toString("utf8");
        if (req.method !== "POST" || req.url !== "/v1/traces" || !String(req.headers["content-type"]).startsWith("application/json")) {
          receiver!.refused.push(`${req.method} ${req.url} ${req.headers["content-type"]}`);
          res.writeHead(415).end();
          return;
        }
        receiver!.take(JSON.parse(body) as OtlpJson);
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    receiver = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return receiver;
  }

  private take(body: OtlpJson): void {
    for (const rs of body.resourceSpans ?? []) {
      const service = String(valueOf(rs.resource?.attributes?.find((a) => a.key === "service.name")?.value ?? {}) ?? "");
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) {
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? "",
            name: s.name,
            kind: s.kind ?? 0,
            startNs: BigInt(s.startTimeUnixNano),
            endNs: BigInt(s.endTimeUnixNano),
            attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, valueOf(a.value)])),
            links: s.links ?? [],
          });
        }
      }
    }
  }

  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}
