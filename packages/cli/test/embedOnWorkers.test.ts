// Embedding where the compute is (issue 33): `attr-rag index serve --nats` with a GGUF embedder sends its
// ingest embedding to the workers serving that embedder (`attr-rag worker --embedder`) as EmbedJobs, batch lane.
// A real cluster (nats-server with the shipped per-role permissions, index, gateway, two embed workers); one
// embed worker is SIGKILLed in the middle of an ingest through the gateway, and the store must end up as a
// clean ingest of the same documents in one process leaves it: no chunk lost, none twice, the same vectors.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { credentials, Metadata } from "@grpc/grpc-js";
import { IndexServiceClient, type IngestDocumentsResponse } from "@attr-rag/contracts";
import { ChunkStore, GgufEmbedder, type DocumentInput } from "@attr-rag/index";
import { natsServerMissing } from "@attr-rag/nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalCluster } from "@attr-rag/cluster";
import { startCluster } from "./helpers/cluster.js";
import { TEST_MODEL } from "./helpers/runCli.js";

const missing = natsServerMissing();
const dir = mkdtempSync(join(tmpdir(), "attr-rag-embed-workers-"));
const WORDS = "flask reflux solvent filter crystal yield heat stir ester amine ketone water ice bath funnel vacuum dry weigh".split(" ");

/** Deterministic documents of about 1,300 characters (two chunks each). */
function documents(n: number): DocumentInput[] {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2147483648);
  return Array.from({ length: n }, (_, i) => {
    const words = Array.from({ length: 200 }, () => WORDS[next() % WORDS.length]);
    return { id: `doc-${i}`, title: `Procedure ${i}`, text: `Procedure ${i}. ${words.join(" ")}.`, source: "test", license: "CC0-1.0" };
  });
}

function ingest(address: string, docs: readonly DocumentInput[]): Promise<IngestDocumentsResponse> {
  const client = new IndexServiceClient(address, credentials.createInsecure());
  return new Promise<IngestDocumentsResponse>((resolve, reject) => {
    const stream = client.ingestDocuments(new Metadata(), (err, res) => (err ? reject(err) : resolve(res!)));
    let i = 0;
    const write = () => {
      while (i < docs.length) {
        const d = docs[i++]!;
        if (!stream.write({ document: { id: d.id, title: d.title ?? "", text: d.text, source: d.source ?? "", license: d.license ?? "", metadata: {} }, waitForReplicas: 0 })) return void stream.once("drain", write);
      }
      stream.end();
    };
    write();
  }).finally(() => client.close());
}

/** What a store holds, to compare two stores: each document's content hash and chunk texts, and the totals. */
async function contents(store: ChunkStore, docs: readonly DocumentInput[]) {
  return {
    stats: (({ documents, chunks, vectors, missingVectors }) => ({ documents, chunks, vectors, missingVectors }))(store.stats()),
    documents: docs.map((d) => ({ id: d.id, hash: store.getDocument(d.id)?.contentHash, chunks: store.getChunks(d.id, 0, 999).map((c) => c.text) })),
  };
}

describe.skipIf(missing !== undefined)(`embedding on the workers${missing ? ` (skipped: ${missing})` : ""}`, () => {
  let cluster: LocalCluster;
  let embedder: GgufEmbedder;
  const docs = documents(80);

  beforeAll(async () => {
    embedder = await GgufEmbedder.load(TEST_MODEL, { threads: 1 });
    // The distributed store starts empty, made with the embedder its index and workers will run.
    const store = await ChunkStore.open(join(dir, "store-d"), { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
    await store.close();
    cluster = await startCluster({ store: join(dir, "store-d"), workers: 1, engine: ["--threads", "1"], embedder: { path: TEST_MODEL, workers: 2 }, ackWaitSeconds: 2 });
  }, 180_000);
  afterAll(async () => {
    await cluster?.kill();
    await embedder?.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it("an ingest through the gateway is embedded by the workers; one SIGKILLed mid-ingest loses no chunk and duplicates none", async () => {
    const [killed, survivor] = cluster.embedders as [(typeof cluster.embedders)[0], (typeof cluster.embedders)[0]];
    const ingested = ingest(cluster.gatewayAddress, docs);
    // Killed while it runs a job: the job goes back to the queue after --ack-wait and the other worker runs it.
    await expect.poll(() => /running embed job/.test(killed.stderr), { timeout: 60_000, interval: 20 }).toBe(true);
    await killed.stop("SIGKILL");
    const response = await ingested;

    expect(response).toMatchObject({ indexed: docs.length, failed: 0 });
    // Logged after the result is published, so it may reach us after the ingest's answer.
    await expect.poll(() => /finished embed job/.test(survivor.stderr), { timeout: 10_000, interval: 20 }).toBe(true);
    expect(cluster.index!.stderr).toMatch(/embedding on the workers serving gguf:stories260K\.gguf@/);
    expect(cluster.index!.stderr).not.toMatch(/no worker serves the embedder/);
    await cluster.stop();

    // The same documents ingested cleanly in this process, with the same embedder.
    const clean = await ChunkStore.open(join(dir, "store-clean"), { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions } });
    await clean.upsertDocuments(docs, (texts) => embedder.embed(texts));
    const distributed = await ChunkStore.open(join(dir, "store-d"), { embed: (texts) => embedder.embed(texts) });
    try {
      const expected = await contents(clean, docs);
      expect(expected.stats.chunks).toBeGreaterThan(docs.length);
      expect(await contents(distributed, docs)).toEqual(expected);
      expect(distributed.repairReport).toMatchObject({ rebuilt: 0, missing: 0 });
      // The workers' vectors are the ones this process makes: a chunk's own vector finds it at cosine 1.
      for (const d of [docs[0]!, docs[40]!, docs[79]!]) {
        const chunk = distributed.getChunks(d.id, 0, 0)[0]!;
        const [vector] = await embedder.embed([chunk.text]);
        const own = distributed.searchDense(vector!, { k: 10 }).find((h) => h.chunkId === chunk.id);
        expect(own?.score, chunk.id).toBeGreaterThan(0.9999);
      }
    } finally {
      await clean.close();
      await distributed.close();
    }
  }, 240_000);
});
