import { createHash, timingSafeEqual } from "node:crypto";
import { status, type Metadata } from "@grpc/grpc-js";
import { ServiceError } from "@attr-rag/index";

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * Checks `authorization: Bearer <token>` metadata when a token is configured.
 */
export function checkBearer(metadata: Metadata, token: string | undefined): void {
  if (token === undefined) return;
  const refusal = bearerRefusal(metadata.get("authorization")[0], token, "metadata");
  if (refusal !== undefined) throw new ServiceError(status.UNAUTHENTICATED, refusal);
}

/**
 * Why an `authorization` value does not carry `token` (undefined when it does); `carrier` names where the
 * client should put it. Digests are compared in constant time so the reply time does not leak how much of a
 * guess was right.
 */
export function bearerRefusal(header: unknown, token: string, carrier: "metadata" | "the header"): string | undefined {
  const presented = typeof header === "string" ? /^Bearer\s+(.+)$/i.exec(header.trim())?.[1] : undefined;
  if (presented === undefined) return `missing credentials: send ${carrier} "authorization: Bearer <token>"`;
  if (!timingSafeEqual(digest(presented), digest(token))) return "invalid bearer token";
  return undefined;
}
