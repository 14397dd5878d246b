import { existsSync, mkdirSync, statSync } from "node:fs";
import { StoreError, StoreNotFoundError } from "../errors.js";
import type { StoreFiles } from "./storeFiles.js";

/**
 * Checks the store directory before anything is written: a missing store is an error unless `create`,
 * and creating one needs an embedder — so a failed open never leaves a half-made store behind.
 */
export function prepareDirectory(files: StoreFiles, create: boolean, hasEmbedder: boolean): void {
  if (existsSync(files.sqlite)) return;
  const dirExists = existsSync(files.dir);
  if (dirExists && !statSync(files.dir).isDirectory()) {
    throw new StoreNotFoundError(`${files.dir} is a file, not a store directory; pass the directory that holds store.sqlite`);
  }
  if (!create) {
    throw new StoreNotFoundError(
      dirExists
        ? `${files.dir} is not a store (it has no store.sqlite); check the path, or pass create: true to make a new store there`
        : `store directory ${files.dir} does not exist; check the path, or pass create: true to create it`,
    );
  }
  if (!hasEmbedder) {
    throw new StoreError(`creating a store at ${files.dir} needs options.embedder ({ id, dimensions }): the store records which embedder built it`);
  }
  try {
    mkdirSync(files.dir, { recursive: true });
  } catch (err) {
    throw new StoreError(`cannot create store directory ${files.dir}: ${(err as Error).message}`, { cause: err });
  }
}
