// One place for the test settings every package shares: a JSON report per package that
// tools/ci/run-tests.mjs adds up into the plain "N passed, N failed" line CI reads.
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";

export function packageTestConfig(packageDir: string, overrides: { testTimeout?: number; forks?: boolean } = {}) {
  return defineConfig({
    test: {
      ...(overrides.forks ? { pool: "forks" as const, fileParallelism: false } : {}),
      include: ["test/**/*.test.ts"],
      testTimeout: overrides.testTimeout ?? 30_000,
      // Hooks start real things (a model, a store, a cluster) as slowly as tests do on a busy machine; the
      // limit only guards against hangs.
      hookTimeout: overrides.testTimeout ?? 30_000,
      reporters: ["default", "json"],
      outputFile: { json: resolve(packageDir, ".reports/vitest.json") },
    },
  });
}
