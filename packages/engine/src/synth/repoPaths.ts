// Default locations inside the attr-rag checkout, found by walking up from this module so they are the same
// whether it runs from src/ (vitest) or dist/ (the CLI), or through a node_modules symlink.
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root: the nearest ancestor holding packages/engine/package.json, or undefined. */
export function findRepoRoot(from = dirname(fileURLToPath(import.meta.url))): string | undefined {
  for (let dir = resolve(from); ; dir = dirname(dir)) {
    if (existsSync(join(dir, "packages", "engine", "package.json"))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}
