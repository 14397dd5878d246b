// gRPC server reflection (grpc.reflection.v1 and v1alpha) from the compiler's own descriptors, so strict
// generic clients (buf curl, grpcurl, grpcui, Postman, Python's reflection client) can list and call the API
// with no .proto files at hand.
import { status, type Server, type ServerDuplexStream, type ServiceDefinition } from "@grpc/grpc-js";
import { apiFileDescriptorSet, healthFileDescriptorSet, splitFileDescriptorSet } from "./apiDescriptors.js";
import { DescriptorIndex } from "./descriptorIndex.js";
import { decodeReflectionRequest, encodeReflectionResponse, type ReflectionAnswer, type ReflectionRequest } from "./reflectionCodec.js";

let apiIndex: DescriptorIndex | undefined;

/** The v1 API's files plus grpc/health/v1/health.proto, indexed once per process. */
export function reflectionIndex(): DescriptorIndex {
  apiIndex ??= new DescriptorIndex([...splitFileDescriptorSet(apiFileDescriptorSet()), ...splitFileDescriptorSet(healthFileDescriptorSet())]);
  return apiIndex;
}

/**
 * Adds grpc.reflection.v1 and v1alpha to `server`, listing `services` (fully-qualified names of the services
 * the server really runs; each must be described by the embedded descriptors).
 */
export function addServerReflection(server: Server, services: readonly string[]): void {
  const index = reflectionIndex();
  for (const name of services) {
    if (!index.services.includes(name)) throw new Error(`server reflection: no descriptor for service ${name}; known: ${index.services.join(", ")}`);
  }
  for (const version of ["v1", "v1alpha"]) {
    server.addService(reflectionDefinition(version), { ServerReflectionInfo: reflectionHandler(index, services) });
  }
}

function reflectionDefinition(version: string): ServiceDefinition {
  return {
    ServerReflectionInfo: {
      path: `/grpc.reflection.${version}.ServerReflection/ServerReflectionInfo`,
      requestStream: true,
      responseStream: true,
      requestSerialize: (r: Uint8Array) => Buffer.from(r),
      requestDeserialize: (b: Buffer) => decodeReflectionRequest(b),
      responseSerialize: (r: Uint8Array) => Buffer.from(r),
      responseDeserialize: (b: Buffer) => b,
    },
  };
}

function reflectionHandler(index: DescriptorIndex, services: readonly string[]) {
  return (call: ServerDuplexStream<ReflectionRequest, Uint8Array>) => {
    call.on("data", (request: ReflectionRequest) => call.write(encodeReflectionResponse(request, answer(index, services, request))));
    call.on("end", () => call.end());
    call.on("error", () => {}); // a client that goes away mid-stream is not a server error
  };
}

function answer(index: DescriptorIndex, services: readonly string[], request: ReflectionRequest): ReflectionAnswer {
  const q = request.query;
  const notFound = (what: string): ReflectionAnswer => ({ error: { code: status.NOT_FOUND, message: `${what} not found` } });
  switch (q.kind) {
    case "listServices":
      return { services };
    case "fileByFilename": {
      const files = index.withDependencies(q.value);
      return files !== undefined ? { fileDescriptors: files } : notFound(`file ${JSON.stringify(q.value)}`);
    }
    case "fileContainingSymbol": {
      const file = index.fileOfSymbol(q.value);
      return file !== undefined ? { fileDescriptors: index.withDependencies(file)! } : notFound(`symbol ${JSON.stringify(q.value)}`);
    }
    case "fileContainingExtension":
      // The API defines no extensions.
      return notFound(`extension ${q.extensionNumber} of ${JSON.stringify(q.containingType)}`);
    case "allExtensionNumbersOfType":
      return index.isMessage(q.value) ? { extensionNumbers: { baseTypeName: q.value.replace(/^\./, ""), numbers: [] } } : notFound(`message type ${JSON.stringify(q.value)}`);
    case "none":
      return { error: { code: status.INVALID_ARGUMENT, message: "the reflection request names no query" } };
  }
}
