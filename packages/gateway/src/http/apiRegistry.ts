import { createFileRegistry, fromBinary, type DescService, type FileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { apiFileDescriptorSet, healthFileDescriptorSet } from "@attr-rag/contracts";

let registry: FileRegistry | undefined;

/** The API's and health's descriptors (the compiler's own, embedded at build time) as protobuf-es types. */
function apiRegistry(): FileRegistry {
  registry ??= createFileRegistry(
    createFileRegistry(fromBinary(FileDescriptorSetSchema, apiFileDescriptorSet())),
    createFileRegistry(fromBinary(FileDescriptorSetSchema, healthFileDescriptorSet())),
  );
  return registry;
}

/** A service of protos/attr_rag/v1 (or grpc.health.v1) by its full name, from the path of its first method. */
export function serviceDescOf(path: string): DescService | undefined {
  const name = /^\/([^/]+)\//.exec(path)?.[1];
  return name === undefined ? undefined : apiRegistry().getService(name);
}
