// Built once per test run, copied to every test that needs it: the demo store (32 documents embedded with
// USE-lite takes seconds of CPU each time, and a dozen test files start from the same one). `npm test`
// (run-tests.mjs) sets ATTR_RAG_TEST_CACHE to a fresh folder and removes it afterwards, so nothing outlives
// the run that built it and a code change can never be tested against an old store. Without the variable
// (one test file run by hand) every call builds its own.
import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";

/**
 * Makes `dest` (a folder that does not exist yet) a copy of what `build(dest)` makes. With a per-run cache the
 * first call builds and keeps a copy under `key`; later calls, in any process of the run, copy that instead.
 * @param {string} key
 * @param {string} dest
 * @param {(dest: string) => Promise<void>} build
 * @returns {Promise<"built" | "copied">}
 */
export async function fromRunCache(key, dest, build) {
  const cache = process.env.ATTR_RAG_TEST_CACHE;
  if (!/^[a-z0-9-]+$/.test(key)) throw new Error(`cache key ${JSON.stringify(key)}: lowercase letters, digits and - only`);
  const kept = cache ? join(cache, key) : undefined;
  if (kept !== undefined && existsSync(kept)) {
    cpSync(kept, dest, { recursive: true });
    return "copied";
  }
  await build(dest);
  if (kept !== undefined) {
    // Copied under a name of this process's, then renamed: another process never sees half a copy, and when
    // two build at once the first rename wins and the second copy is dropped.
    mkdirSync(cache, { recursive: true });
    const partial = `${kept}.${process.pid}.partial`;
    cpSync(dest, partial, { recursive: true });
    try {
      renameSync(partial, kept);
    } catch {
      rmSync(partial, { recursive: true, force: true });
    }
  }
  return "built";
}
