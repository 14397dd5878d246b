import * as grpc from "@grpc/grpc-js";
import { describe, expect, it } from "vitest";
import {
  AskResponse,
  AttrRagServiceClient,
  AttrRagServiceService,
  FinishReason,
  IndexServiceClient,
  IndexServiceService,
  IngestDocumentsResponse,
  IngestStatus,
  RetrievalMode,
  type AttrRagServiceServer,
  type IndexServiceServer,
  type IngestDocumentsRequest,
} from "../src/index.js";
import { startGrpcServer } from "./helpers/grpcServer.js";

const unimplemented = (): never => {
  throw new Error("not used in this test");
};

/** Ask that streams three stage events built from the request. */
const askService: AttrRagServiceServer = {
  ask(call) {
    const requestId = call.request.requestId ?? "server-assigned";
    const events: AskResponse[] = [
      AskResponse.fromPartial({
        event: {
          requestId,
          sequence: 0,
          stage: {
            $case: "retrieved",
            value: {
              mode: call.request.retrieval?.mode ?? RetrievalMode.RETRIEVAL_MODE_UNSPECIFIED,
              chunks: [{ rank: 1, score: 0.9, chunk: { id: "d1#0", docId: "d1", text: call.request.question } }],
            },
          },
        },
      }),
      AskResponse.fromPartial({
        event: { requestId, sequence: 1, stage: { $case: "finalAnswerDelta", value: { text: "42", finishReason: FinishReason.FINISH_REASON_STOP } } },
      }),
      AskResponse.fromPartial({
        event: { requestId, sequence: 2, stage: { $case: "done", value: { timings: { totalMs: 7 } } } },
      }),
    ];
    for (const event of events) call.write(event);
    call.end();
  },
  attribute: unimplemented,
};

/** IngestDocuments that reports every streamed document in arrival order. */
const indexService: IndexServiceServer = {
  ingestDocuments(call, callback) {
    const received: IngestDocumentsRequest[] = [];
    call.on("data", (request: IngestDocumentsRequest) => received.push(request));
    call.on("error", () => undefined);
    call.on("end", () => {
      callback(
        null,
        IngestDocumentsResponse.fromPartial({
          results: received.map((r) => ({
            docId: r.document?.id ?? "",
            status: IngestStatus.INGEST_STATUS_INDEXED,
            chunkCount: Math.ceil((r.document?.text.length ?? 0) / 10),
          })),
          indexed: received.length,
        }),
      );
    });
  },
  search: unimplemented,
  getChunks: unimplemented,
  deleteDocument: unimplemented,
  getStats: unimplemented,
  embedTexts: unimplemented,
};

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of stream) items.push(item);
  return items;
}

describe("grpc", () => {
  it("grpc - Ask streams three events to a real client in order", async () => {
    const server = await startGrpcServer((s) => s.addService(AttrRagServiceService, askService));
    const client = new AttrRagServiceClient(server.address, grpc.credentials.createInsecure());
    try {
      const responses = await collect<AskResponse>(
        client.ask({ question: "Explain all steps", requestId: "req-9", retrieval: { mode: RetrievalMode.RETRIEVAL_MODE_BM25 }, includeOccludedAnswers: false }),
      );

      expect(responses.map((r) => r.event?.stage?.$case)).toEqual(["retrieved", "finalAnswerDelta", "done"]);
      expect(responses.map((r) => r.event?.sequence)).toEqual([0, 1, 2]);
      expect(responses.every((r) => r.event?.requestId === "req-9")).toBe(true);

      const first = responses[0]?.event?.stage;
      if (first?.$case !== "retrieved") throw new Error("first event is not 'retrieved'");
      expect(first.value.mode).toBe(RetrievalMode.RETRIEVAL_MODE_BM25);
      expect(first.value.chunks[0]?.chunk?.text).toBe("Explain all steps");

      const last = responses[2]?.event?.stage;
      expect(last).toEqual({ $case: "done", value: expect.objectContaining({ timings: expect.objectContaining({ totalMs: 7 }) }) });
    } finally {
      client.close();
      await server[Symbol.asyncDispose]();
    }
  });

  it("grpc - IngestDocuments receives a client stream and answers once", async () => {
    const server = await startGrpcServer((s) => s.addService(IndexServiceService, indexService));
    const client = new IndexServiceClient(server.address, grpc.credentials.createInsecure());
    try {
      const response = await new Promise<IngestDocumentsResponse>((resolve, reject) => {
        const call = client.ingestDocuments((error, res) => (error ? reject(error) : resolve(res)));
        for (const [id, text] of [["doc-a", "x".repeat(25)], ["doc-b", "y".repeat(5)]] as const) {
          call.write({ document: { id, title: id, text, source: "test", license: "CC0", metadata: { lang: "en" } }, waitForReplicas: 0 });
        }
        call.end();
      });

      expect(response.results.map((r) => [r.docId, r.status, r.chunkCount])).toEqual([
        ["doc-a", IngestStatus.INGEST_STATUS_INDEXED, 3],
        ["doc-b", IngestStatus.INGEST_STATUS_INDEXED, 1],
      ]);
      expect(response.indexed).toBe(2);
    } finally {
      client.close();
      await server[Symbol.asyncDispose]();
    }
  });
});
