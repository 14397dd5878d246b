import { createHash, timingSafeEqual } from "node:crypto";
import { status, type Metadata } from "@grpc/grpc-js";
import { ServiceError } from "@attr-rag/index";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Checks `authorization: Bearer <token>` metadata when a token is configured. Digests are compared in
 * constant time so the reply time does not leak how much of a guess was right.
 */
export function checkBearer(metadata: Metadata, token: string | undefined): void {
  if (token === undefined) return;
  const header = metadata.get("authorization")[0];
  const presented = typeof header === "string" ? /^Bearer\s+(.+)$/i.exec(header.trim())?.[1] : undefined;
  if (presented === undefined) throw new ServiceError(status.UNAUTHENTICATED, 'missing credentials: send metadata "authorization: Bearer <token>"');
  if (!timingSafeEqual(digest(presented), digest(token))) throw new ServiceError(status.UNAUTHENTICATED, "invalid bearer token");
}
