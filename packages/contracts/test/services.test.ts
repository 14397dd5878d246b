import { describe, expect, it } from "vitest";
import {
  ATTR_RAG_SERVICE_NAME,
  BATCH_SERVICE_NAME,
  BatchServiceClient,
  BatchServiceService,
  AttrRagServiceClient,
  AttrRagServiceService,
  GRPC_SERVICE_NAMES,
  INDEX_SERVICE_NAME,
  IndexServiceClient,
  IndexServiceService,
} from "../src/index.js";

interface MethodDefinition {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
}

const EXPECTED: Array<[string, Record<string, MethodDefinition>, string, string, boolean, boolean]> = [
  ["AttrRagService", AttrRagServiceService, "ask", "/attr_rag.v1.AttrRagService/Ask", false, true],
  ["AttrRagService", AttrRagServiceService, "attribute", "/attr_rag.v1.AttrRagService/Attribute", false, false],
  ["IndexService", IndexServiceService, "ingestDocuments", "/attr_rag.v1.IndexService/IngestDocuments", true, false],
  ["IndexService", IndexServiceService, "search", "/attr_rag.v1.IndexService/Search", false, false],
  ["IndexService", IndexServiceService, "getChunks", "/attr_rag.v1.IndexService/GetChunks", false, false],
  ["IndexService", IndexServiceService, "deleteDocument", "/attr_rag.v1.IndexService/DeleteDocument", false, false],
  ["IndexService", IndexServiceService, "getStats", "/attr_rag.v1.IndexService/GetStats", false, false],
  ["IndexService", IndexServiceService, "embedTexts", "/attr_rag.v1.IndexService/EmbedTexts", false, false],
  ["BatchService", BatchServiceService, "createBatch", "/attr_rag.v1.BatchService/CreateBatch", false, false],
  ["BatchService", BatchServiceService, "getBatch", "/attr_rag.v1.BatchService/GetBatch", false, false],
  ["BatchService", BatchServiceService, "listBatches", "/attr_rag.v1.BatchService/ListBatches", false, false],
  ["BatchService", BatchServiceService, "watchBatch", "/attr_rag.v1.BatchService/WatchBatch", false, true],
  ["BatchService", BatchServiceService, "listBatchResults", "/attr_rag.v1.BatchService/ListBatchResults", false, true],
  ["BatchService", BatchServiceService, "cancelBatch", "/attr_rag.v1.BatchService/CancelBatch", false, false],
];

describe("services", () => {
  it.each(EXPECTED)("services - %s.%s has its path and streaming flags", (_service, definition, method, path, requestStream, responseStream) => {
    expect(definition[method]).toMatchObject({ path, requestStream, responseStream });
  });

  it("services - define exactly the expected methods", () => {
    expect(Object.keys(AttrRagServiceService).sort()).toEqual(["ask", "attribute"]);
    expect(Object.keys(IndexServiceService).sort()).toEqual(["deleteDocument", "embedTexts", "getChunks", "getStats", "ingestDocuments", "search"]);
    expect(Object.keys(BatchServiceService).sort()).toEqual(["cancelBatch", "createBatch", "getBatch", "listBatchResults", "listBatches", "watchBatch"]);
  });

  it("services - exported service names match the generated definitions", () => {
    expect(AttrRagServiceClient.serviceName).toBe(ATTR_RAG_SERVICE_NAME);
    expect(IndexServiceClient.serviceName).toBe(INDEX_SERVICE_NAME);
    expect(AttrRagServiceService.ask.path.startsWith(`/${ATTR_RAG_SERVICE_NAME}/`)).toBe(true);
    expect(IndexServiceService.search.path.startsWith(`/${INDEX_SERVICE_NAME}/`)).toBe(true);
    expect(BatchServiceClient.serviceName).toBe(BATCH_SERVICE_NAME);
    expect(GRPC_SERVICE_NAMES).toEqual([ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME, BATCH_SERVICE_NAME, "attr_rag.v1.ClusterService"]);
  });
});
