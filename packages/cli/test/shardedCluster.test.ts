// A distributed cluster whose index is 2 shards × 2 replicas fed by the ingest log (real nats-server with the
// per-role permissions of deploy/nats/nats-server.conf, one process per role): an Ask's retrieval, selection and
// answer are those of one embedded store holding every document.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials } from "@grpc/grpc-js";
import { AskEvent, IndexServiceClient, type AttributionTable, type GetStatsResponse } from "@attr-rag/contracts";
import { natsServerMissing } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalCluster } from "@attr-rag/cluster";
import { startCluster } from "./helpers/cluster.js";
import { DEMO_CORPUS, runCli, TEST_MODEL } from "./helpers/runCli.js";

const dir = mkdtempSync(join(tmpdir(), "attr-rag-sharded-cluster-"));
const storeEmbedded = join(dir, "store-e");
const QUESTIONS = ["Explain all the required steps of the acetaminophen synthesis."];
const ENGINE = ["--context-size", "16384", "--sequences", "4", "--threads", "1"];
const REQUEST = ["--k", "6", "--max-tokens", "12"];
/** The store's embedder: the shipped tiny GGUF, so four index processes start in seconds. */
const EMBEDDER = `gguf:${TEST_MODEL}`;

const first = <C extends string>(events: readonly AskEvent[], c: C) => events.find((e) => e.stage?.$case === c)?.stage?.value as never;
const parse = (out: string) => out.trim().split("\n").map((l) => AskEvent.fromJSON(JSON.parse(l)));

let cluster: LocalCluster;
let embedded: { documents: number; chunks: number };
const missing = natsServerMissing();

beforeAll(async () => {
  if (missing !== undefined) return;
  const ingest = await runCli(["ingest", DEMO_CORPUS, "--store", storeEmbedded, "--embedder", EMBEDDER, "--json"]);
  expect(ingest.code, ingest.stderr).toBe(0);
  embedded = (JSON.parse(ingest.stdout) as { store: { documents: number; chunks: number } }).store;
  cluster = await startCluster({ store: join(dir, "index"), workers: 1, engine: ENGINE, gatewayArgs: [...REQUEST, "--embedder", EMBEDDER], index: { shards: 2, replicas: 2, embedderPath: TEST_MODEL } });
  await cluster.ingestThroughLog(DEMO_CORPUS);
}, 240_000);

afterAll(async () => {
  await cluster?.[Symbol.asyncDispose]();
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(`sharded, replicated index in a cluster${missing ? ` (skipped: ${missing})` : ""}`, () => {
  it("sharded cluster - 2 shards × 2 replicas: the same retrieval, selection, α table and answer as one embedded store", async () => {
    for (const question of QUESTIONS) {
      const remote = await runCli(["ask", question, "--server", cluster.gatewayAddress, "--json", ...REQUEST]);
      expect(remote.code, remote.stderr + cluster.logs()).toBe(0);
      const local = await runCli(["ask", question, "--json", "--store", storeEmbedded, "--embedder", EMBEDDER, "--model", TEST_MODEL, ...ENGINE, ...REQUEST]);
      expect(local.code, local.stderr).toBe(0);
      const [d, e] = [parse(remote.stdout), parse(local.stdout)];
      const ids = (events: AskEvent[]) => (first(events, "retrieved") as { chunks: { chunk: { id: string } }[] }).chunks.map((c) => c.chunk.id);
      expect(ids(d)).toEqual(ids(e));
      const [ta, tb] = [first(d, "attribution") as AttributionTable, first(e, "attribution") as AttributionTable];
      expect(ta.rows.map((r) => r.setId)).toEqual(tb.rows.map((r) => r.setId));
      ta.rows.forEach((row, i) => row.scores.forEach((s, k) => expect(Math.abs(s.alpha - tb.rows[i]!.scores[k]!.alpha)).toBeLessThanOrEqual(1e-9)));
      expect(first(d, "selection")).toEqual(first(e, "selection"));
      expect(first(d, "finalAnswer")).toEqual(first(e, "finalAnswer"));
    }
  });

  it("sharded cluster - GetStats on the gateway's IndexService sums the shards: every demo document, each in one shard", async () => {
    const client = new IndexServiceClient(cluster.gatewayAddress, credentials.createInsecure());
    const stats = await new Promise<GetStatsResponse>((resolve, reject) => client.getStats({}, (err, res) => (err ? reject(err) : resolve(res)))).finally(() => client.close());
    expect({ documents: stats.documents, chunks: stats.chunks }).toEqual(embedded);
    expect(stats.storePath).toMatch(/^shard 0: .*; shard 1: /);
  });
});
