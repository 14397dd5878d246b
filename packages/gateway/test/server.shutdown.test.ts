import { status } from "@grpc/grpc-js";
import { AskRequest } from "@attr-rag/contracts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Runtime, startGatewayServer } from "../src/index.js";
import { buildDemoStore, QUESTION, testConfig } from "./helpers/demoStore.js";
import { askStream, attrRagClient } from "./helpers/grpcClients.js";

describe("gateway shutdown", () => {
  let store: Awaited<ReturnType<typeof buildDemoStore>>;
  beforeAll(async () => {
    store = await buildDemoStore();
  });
  afterAll(() => store?.remove());

  it("gateway - closing the server mid-ask cancels the ask after the grace period and frees the engine", async () => {
    const runtime = await Runtime.open(testConfig(store.dir));
    const server = await startGatewayServer({ runtime, shutdownGraceMs: 300 });
    const client = attrRagClient(server.address);
    const request = AskRequest.fromPartial({ question: QUESTION, retrieval: { k: 10, mode: 0 }, generation: { maxTokens: 400, strategy: 0 } });
    // Close once the engine is generating (the first answer delta has arrived).
    let answering!: () => void;
    const generating = new Promise<void>((r) => (answering = r));
    const asked = askStream(client, request, { onEvent: (e) => e.stage?.$case === "initialAnswerDelta" && answering() });
    await generating;
    await server.close();
    const outcome = await asked;
    expect(outcome.error?.code).toBeOneOf([status.CANCELLED, status.UNAVAILABLE]);
    expect(outcome.events.some((e) => e.stage?.$case === "done")).toBe(false);
    // The server's side: the Ask's work was stopped, not left to run on to its end.
    expect(server.stopped.recent()).toEqual([expect.objectContaining({ rpc: "Ask", stopped: true })]);
    expect(runtime.model.disposed).toBe(true);
    expect(runtime.generator.disposed).toBe(true);
    await server.close(); // repeat-safe
    client.close();
  });
});
