import { status } from "@grpc/grpc-js";
import { ServiceError } from "@attr-rag/index";

/** Where a ListBatches page ended: batches are listed newest first, ties by id. */
export interface PagePosition {
  readonly createdMs: number;
  readonly id: string;
}

export function encodePageToken(p: PagePosition): string {
  return Buffer.from(JSON.stringify([p.createdMs, p.id]), "utf8").toString("base64url");
}

export function decodePageToken(token: string): PagePosition {
  try {
    const [createdMs, id] = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as [unknown, unknown];
    if (typeof createdMs === "number" && Number.isFinite(createdMs) && typeof id === "string") return { createdMs, id };
  } catch {
    // fall through
  }
  throw new ServiceError(status.INVALID_ARGUMENT, "page_token is not one this server gave out; pass next_page_token from the previous ListBatches");
}

/** Batches newest first, ties by id descending: the order both stores list in. */
export function newestFirst(a: PagePosition, b: PagePosition): number {
  return b.createdMs - a.createdMs || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** Whether `p` comes after the page that ended at `after`. */
export function isAfter(p: PagePosition, after: PagePosition): boolean {
  return newestFirst(p, after) > 0;
}
