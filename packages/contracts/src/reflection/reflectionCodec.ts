// The wire format of grpc.reflection.v1 (and v1alpha, which is identical on the wire) for the few messages
// a reflection server reads and writes. Hand-written over @bufbuild/protobuf's wire primitives: the request
// is echoed back byte for byte as original_request, and descriptors go out exactly as the compiler made them.
import { BinaryReader, BinaryWriter, WireType } from "@bufbuild/protobuf/wire";

export type ReflectionQuery =
  | { readonly kind: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices"; readonly value: string }
  | { readonly kind: "fileContainingExtension"; readonly containingType: string; readonly extensionNumber: number }
  | { readonly kind: "none" };

export interface ReflectionRequest {
  readonly raw: Uint8Array;
  readonly host: string;
  readonly query: ReflectionQuery;
}

export type ReflectionAnswer =
  | { readonly fileDescriptors: readonly Uint8Array[] }
  | { readonly services: readonly string[] }
  | { readonly extensionNumbers: { readonly baseTypeName: string; readonly numbers: readonly number[] } }
  | { readonly error: { readonly code: number; readonly message: string } };

const STRING_QUERIES: Readonly<Record<number, Exclude<ReflectionQuery["kind"], "fileContainingExtension" | "none">>> = {
  3: "fileByFilename",
  4: "fileContainingSymbol",
  6: "allExtensionNumbersOfType",
  7: "listServices",
};

export function decodeReflectionRequest(raw: Uint8Array): ReflectionRequest {
  const reader = new BinaryReader(raw);
  let host = "";
  let query: ReflectionQuery = { kind: "none" };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    const stringKind = STRING_QUERIES[field];
    if (field === 1 && wireType === WireType.LengthDelimited) host = reader.string();
    else if (stringKind !== undefined && wireType === WireType.LengthDelimited) query = { kind: stringKind, value: reader.string() };
    else if (field === 5 && wireType === WireType.LengthDelimited) query = decodeExtensionRequest(reader.bytes());
    else reader.skip(wireType, field);
  }
  return { raw, host, query };
}

function decodeExtensionRequest(bytes: Uint8Array): ReflectionQuery {
  const reader = new BinaryReader(bytes);
  let containingType = "";
  let extensionNumber = 0;
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.LengthDelimited) containingType = reader.string();
    else if (field === 2 && wireType === WireType.Varint) extensionNumber = reader.int32();
    else reader.skip(wireType, field);
  }
  return { kind: "fileContainingExtension", containingType, extensionNumber };
}

export function encodeReflectionResponse(request: ReflectionRequest, answer: ReflectionAnswer): Uint8Array {
  const w = new BinaryWriter();
  if (request.host !== "") w.tag(1, WireType.LengthDelimited).string(request.host);
  w.tag(2, WireType.LengthDelimited).bytes(request.raw);
  if ("fileDescriptors" in answer) {
    w.tag(4, WireType.LengthDelimited).fork();
    for (const file of answer.fileDescriptors) w.tag(1, WireType.LengthDelimited).bytes(file);
    w.join();
  } else if ("extensionNumbers" in answer) {
    w.tag(5, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(answer.extensionNumbers.baseTypeName);
    if (answer.extensionNumbers.numbers.length > 0) {
      w.tag(2, WireType.LengthDelimited).fork();
      for (const n of answer.extensionNumbers.numbers) w.int32(n);
      w.join();
    }
    w.join();
  } else if ("services" in answer) {
    w.tag(6, WireType.LengthDelimited).fork();
    for (const name of answer.services) w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.LengthDelimited).string(name).join();
    w.join();
  } else {
    w.tag(7, WireType.LengthDelimited).fork().tag(1, WireType.Varint).int32(answer.error.code).tag(2, WireType.LengthDelimited).string(answer.error.message).join();
  }
  return w.finish();
}
