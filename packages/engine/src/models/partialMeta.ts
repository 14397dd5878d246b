// NAME.gguf.partial.json: what a later `models pull` needs to know to resume NAME.gguf.partial safely.
import { readFileSync, rmSync } from "node:fs";

export interface PartialMeta {
  url: string;
  /** A strong ETag or Last-Modified, sent as If-Range and compared with the resumed response's. */
  validator?: string;
  total?: number;
  /** The hub's sha256 of the file (X-Linked-ETag), checked once the file is whole. */
  hubSha256?: string;
}

export function readPartialMeta(path: string): PartialMeta | undefined {
  try {
    const meta = JSON.parse(readFileSync(path, "utf8")) as PartialMeta;
    return typeof meta.url === "string" ? meta : undefined;
  } catch {
    return undefined;
  }
}

export function removeFiles(...paths: string[]): void {
  for (const p of paths) rmSync(p, { force: true });
}
