import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { loadSync } from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";

/** protos/ of the repository (dist/server/ → ../../../../protos), or ATTR_RAG_PROTOS_DIR. */
export function protosDir(): string {
  const dir = process.env.ATTR_RAG_PROTOS_DIR ?? resolve(dirname(fileURLToPath(import.meta.url)), "../../../../protos");
  if (!existsSync(join(dir, "attr_rag/v1/attr_rag_service.proto"))) {
    throw new Error(`server reflection: protos not found in ${dir}; set ATTR_RAG_PROTOS_DIR to the repository's protos/ folder`);
  }
  return dir;
}

/**
 * grpc.reflection (v1 and v1alpha) for the gateway's services, built from the same .proto files the
 * TypeScript was generated from, so grpcurl and other generic clients can discover the API.
 */
export function reflectionService(): ReflectionService {
  const dir = protosDir();
  const definition = loadSync(["attr_rag/v1/attr_rag_service.proto", "attr_rag/v1/index_service.proto"], {
    includeDirs: [dir],
    keepCase: true,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return new ReflectionService(definition, { services: ["attr_rag.v1.AttrRagService", "attr_rag.v1.IndexService"] });
}
