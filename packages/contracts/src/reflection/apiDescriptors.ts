// The descriptors exactly as the compiler made them (`buf build`, embedded at build time): one serialized
// FileDescriptorProto per .proto file, in dependency order, byte for byte what buf produced.
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";
import { API_FILE_DESCRIPTOR_SET_BASE64, HEALTH_FILE_DESCRIPTOR_SET_BASE64 } from "../gen/descriptorSet.js";

/** The standard health service, served by grpc-health-check. */
export const HEALTH_SERVICE_NAME = "grpc.health.v1.Health";

/** FileDescriptorSet.file is field 1; each entry is one serialized FileDescriptorProto. */
const FILE_FIELD = 1;

/** Splits a serialized FileDescriptorSet into its files' bytes without re-encoding them. */
export function splitFileDescriptorSet(set: Uint8Array): Uint8Array[] {
  const reader = new BinaryReader(set);
  const files: Uint8Array[] = [];
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === FILE_FIELD && wireType === WireType.LengthDelimited) files.push(reader.bytes());
    else reader.skip(wireType, field);
  }
  return files;
}

/** The serialized FileDescriptorSet of protos/attr_rag/v1 (with the well-known types it imports, if any). */
export function apiFileDescriptorSet(): Uint8Array {
  return Buffer.from(API_FILE_DESCRIPTOR_SET_BASE64, "base64");
}

/** grpc/health/v1/health.proto as grpc-health-check ships it, compiled by the same buf. */
export function healthFileDescriptorSet(): Uint8Array {
  return Buffer.from(HEALTH_FILE_DESCRIPTOR_SET_BASE64, "base64");
}
