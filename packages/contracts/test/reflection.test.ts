import { execFile } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import * as grpc from "@grpc/grpc-js";
import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";
import { FileDescriptorProtoSchema, type DescriptorProto } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { PROTOS_DIR, resolveBuf } from "../scripts/toolchain.mjs";
import {
  addServerReflection,
  apiFileDescriptorSet,
  ATTR_RAG_SERVICE_NAME,
  AttrRagServiceService,
  HEALTH_SERVICE_NAME,
  healthFileDescriptorSet,
  INDEX_SERVICE_NAME,
  IndexServiceService,
  reflectionIndex,
  splitFileDescriptorSet,
} from "../src/index.js";
import { startGrpcServer } from "./helpers/grpcServer.js";

const files = splitFileDescriptorSet(apiFileDescriptorSet()).map((bytes) => fromBinary(FileDescriptorProtoSchema, bytes));

function* messages(list: readonly DescriptorProto[], scope: string): Generator<[string, DescriptorProto]> {
  for (const m of list) {
    yield [`${scope}.${m.name}`, m];
    yield* messages(m.nestedType, `${scope}.${m.name}`);
  }
}

/** buf curl (a strict reflection client) against a plaintext HTTP/2 server; async, as the server shares this event loop. */
async function bufCurl(...args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, [resolveBuf(), "curl", "--protocol", "grpc", "--http2-prior-knowledge", ...args]);
  return stdout;
}

describe("reflection descriptors", () => {
  it("reflection - the embedded image holds one FileDescriptorProto per .proto file, under its real name", () => {
    const onDisk = readdirSync(join(PROTOS_DIR, "attr_rag/v1")).filter((f) => f.endsWith(".proto")).map((f) => `attr_rag/v1/${f}`);
    expect(files.map((f) => f.name).sort()).toEqual(onDisk.sort());
    for (const f of files) expect(f.package).toBe("attr_rag.v1");
    // Imports are listed, and each file comes after the files it imports.
    const seen = new Set<string>();
    for (const f of files) {
      for (const dep of f.dependency) expect(seen.has(dep), `${f.name} imports ${dep}`).toBe(true);
      seen.add(f.name);
    }
    expect(files.find((f) => f.name === "attr_rag/v1/attr_rag_service.proto")!.dependency).toContain("attr_rag/v1/pipeline.proto");
  });

  it("reflection - every type reference is fully qualified and resolves to a symbol of the image", () => {
    const index = reflectionIndex();
    let references = 0;
    for (const f of files) {
      for (const [, m] of messages(f.messageType, f.package)) {
        for (const field of m.field) {
          if (field.typeName === "") continue;
          references++;
          expect(field.typeName, `${m.name}.${field.name}`).toMatch(/^\.attr_rag\.v1\./);
          expect(index.fileOfSymbol(field.typeName), field.typeName).toBeDefined();
        }
      }
      for (const s of f.service) {
        for (const method of s.method) {
          references += 2;
          for (const t of [method.inputType, method.outputType]) expect(index.fileOfSymbol(t), t).toBeDefined();
          expect(method.inputType).toMatch(/^\.attr_rag\.v1\./);
        }
      }
    }
    expect(references).toBeGreaterThan(50);
  });

  it("reflection - a map field refers to a map entry named as protoc names it", () => {
    const doc = files.find((f) => f.name === "attr_rag/v1/document.proto")!.messageType.find((m) => m.name === "Document")!;
    const metadata = doc.field.find((f) => f.name === "metadata")!;
    expect(metadata.typeName).toBe(".attr_rag.v1.Document.MetadataEntry");
    const entry = doc.nestedType.find((m) => m.name === "MetadataEntry")!;
    expect(entry.options?.mapEntry).toBe(true);
    expect(entry.field.map((f) => [f.name, f.number])).toEqual([["key", 1], ["value", 2]]);
  });

  it("reflection - the index finds services, methods, nested types and enum values", () => {
    const index = reflectionIndex();
    expect(index.services).toEqual(expect.arrayContaining([ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME, HEALTH_SERVICE_NAME]));
    expect(index.fileOfSymbol("attr_rag.v1.AttrRagService.Ask")).toBe("attr_rag/v1/attr_rag_service.proto");
    expect(index.fileOfSymbol(".attr_rag.v1.Document.MetadataEntry")).toBe("attr_rag/v1/document.proto");
    expect(index.fileOfSymbol("attr_rag.v1.RETRIEVAL_MODE_BM25")).toBe("attr_rag/v1/retrieval.proto");
    expect(index.fileOfSymbol("grpc.health.v1.HealthCheckResponse.SERVING")).toBe("grpc/health/v1/health.proto");
    expect(index.fileOfSymbol("attr_rag.v1.NoSuchThing")).toBeUndefined();
    const withDeps = index.withDependencies("attr_rag/v1/retrieval.proto")!.map((b) => fromBinary(FileDescriptorProtoSchema, b).name);
    expect(withDeps).toEqual(["attr_rag/v1/retrieval.proto", "attr_rag/v1/chunk.proto"]);
  });

  it("reflection - grpc.health.v1 is grpc-health-check's own health.proto (Check, Watch and List), compiled by buf", () => {
    const [health] = splitFileDescriptorSet(healthFileDescriptorSet()).map((b) => fromBinary(FileDescriptorProtoSchema, b));
    expect(health!.name).toBe("grpc/health/v1/health.proto");
    expect(health!.service.map((s) => [s.name, s.method.map((m) => m.name)])).toEqual([["Health", ["Check", "Watch", "List"]]]);
    const list = health!.messageType.find((m) => m.name === "HealthListResponse")!;
    expect(list.field[0]!.typeName).toBe(".grpc.health.v1.HealthListResponse.StatusesEntry");
    expect(list.nestedType[0]!.options?.mapEntry).toBe(true);
  });

  it("reflection - a service without a descriptor is refused when reflection is added", () => {
    expect(() => addServerReflection(new grpc.Server(), ["attr_rag.v1.Missing"])).toThrow(/no descriptor for service attr_rag\.v1\.Missing/);
  });
});

describe("reflection service", () => {
  it("reflection - buf curl lists exactly the registered services and their methods over v1 and v1alpha", async () => {
    await using server = await startGrpcServer((s) => addServerReflection(s, [ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME]));
    const url = `http://${server.address}`;
    expect((await bufCurl("--list-services", url)).trim().split("\n")).toEqual([ATTR_RAG_SERVICE_NAME, INDEX_SERVICE_NAME]);
    const expected = [...Object.values(AttrRagServiceService), ...Object.values(IndexServiceService)].map((m) => m.path.slice(1)).sort();
    for (const protocol of ["grpc-v1", "grpc-v1alpha"]) {
      expect((await bufCurl("--reflect-protocol", protocol, "--list-methods", url)).trim().split("\n").sort()).toEqual(expected);
    }
  });

  it("reflection - answers files with their imports, NOT_FOUND for unknown names, on one open stream", async () => {
    await using server = await startGrpcServer((s) => addServerReflection(s, [INDEX_SERVICE_NAME]));
    const Client = grpc.makeGenericClientConstructor(
      {
        info: {
          path: "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
          requestStream: true,
          responseStream: true,
          requestSerialize: (b: Uint8Array) => Buffer.from(b),
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (b: Uint8Array) => Buffer.from(b),
          responseDeserialize: (b: Buffer) => b,
        },
      },
      "ServerReflection",
    );
    const client = new Client(server.address, grpc.credentials.createInsecure()) as unknown as { info(): grpc.ClientDuplexStream<Uint8Array, Buffer> } & grpc.Client;
    const call = client.info();
    const replies: Buffer[] = [];
    const ended = new Promise<void>((resolve, reject) => {
      call.on("data", (b: Buffer) => replies.push(b));
      call.on("end", resolve);
      call.on("error", reject);
    });
    const request = (field: number, value: string) => new BinaryWriter().tag(1, WireType.LengthDelimited).string("h").tag(field, WireType.LengthDelimited).string(value).finish();
    call.write(request(4, "attr_rag.v1.NoSuchThing")); // file_containing_symbol
    call.write(request(3, "attr_rag/v1/index_service.proto")); // file_by_filename
    call.write(request(7, "*")); // list_services
    call.end();
    await ended;
    client.close();
    expect(replies).toHaveLength(3);

    const top = (b: Buffer) => {
      const r = new BinaryReader(b);
      const out = new Map<number, Uint8Array | string>();
      while (r.pos < r.len) {
        const [field, wt] = r.tag();
        if (field === 1) out.set(field, r.string());
        else if (wt === WireType.LengthDelimited) out.set(field, r.bytes());
        else r.skip(wt, field);
      }
      return out;
    };
    const repeatedBytes = (b: Uint8Array) => {
      const r = new BinaryReader(b);
      const out: Uint8Array[] = [];
      while (r.pos < r.len) {
        r.tag();
        out.push(r.bytes());
      }
      return out;
    };

    const notFound = top(replies[0]!);
    expect(notFound.get(1)).toBe("h"); // valid_host
    expect(Buffer.from(notFound.get(2) as Uint8Array)).toEqual(Buffer.from(request(4, "attr_rag.v1.NoSuchThing"))); // original_request echoed
    const error = new BinaryReader(notFound.get(7) as Uint8Array);
    error.tag();
    expect(error.int32()).toBe(grpc.status.NOT_FOUND);
    error.tag();
    expect(error.string()).toMatch(/NoSuchThing.*not found/);

    const sent = repeatedBytes(top(replies[1]!).get(4) as Uint8Array).map((b) => fromBinary(FileDescriptorProtoSchema, b).name);
    expect(sent[0]).toBe("attr_rag/v1/index_service.proto");
    expect(sent.slice(1).sort()).toEqual(["attr_rag/v1/chunk.proto", "attr_rag/v1/document.proto", "attr_rag/v1/embedding.proto", "attr_rag/v1/retrieval.proto"]);

    const list = repeatedBytes(top(replies[2]!).get(6) as Uint8Array).map((b) => {
      const r = new BinaryReader(b);
      r.tag();
      return r.string();
    });
    expect(list).toEqual([INDEX_SERVICE_NAME]);
  });
});
