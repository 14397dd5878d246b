// One place for the test settings every package shares: a JSON report per package that
// tools/ci/run-tests.mjs adds up into the plain "N passed, N failed" line CI reads, a timing report beside
// it (files, tests, their seconds and assertions) from which it prints where the time went, and the errors no
// test owns (a describe whose beforeAll threw), each of which it counts as a failure.
import { resolve } from "node:path";
import { defineConfig } from "vitest/config";
import ErrorsReporter from "./tools/ci/errorsReporter.mjs";
import TimingReporter from "./tools/ci/timingReporter.mjs";

export interface PackageTestOptions {
  testTimeout?: number;
  forks?: boolean;
  /** Test files (default test/**\/*.test.ts) and files left out of them. */
  include?: string[];
  exclude?: string[];
  /** The report's name in .reports/ (default vitest.json); run-tests.mjs adds up every .reports/vitest*.json. */
  report?: string;
}

export function packageTestConfig(packageDir: string, overrides: PackageTestOptions = {}) {
  return defineConfig({
    test: {
      ...(overrides.forks ? { pool: "forks" as const, fileParallelism: false } : {}),
      include: overrides.include ?? ["test/**/*.test.ts"],
      ...(overrides.exclude ? { exclude: [...overrides.exclude, "**/node_modules/**"] } : {}),
      testTimeout: overrides.testTimeout ?? 30_000,
      // Hooks start real things (a model, a store, a cluster) as slowly as tests do on a busy machine; the
      // limit only guards against hangs.
      hookTimeout: overrides.testTimeout ?? 30_000,
      setupFiles: [resolve(import.meta.dirname, "tools/ci/countAssertions.mjs")],
      reporters: [
        "default",
        "json",
        new TimingReporter({ outputFile: resolve(packageDir, ".reports", `timing-${overrides.report ?? "vitest.json"}`), root: resolve(import.meta.dirname) }),
        new ErrorsReporter({ outputFile: resolve(packageDir, ".reports", `errors-${overrides.report ?? "vitest.json"}`), root: resolve(import.meta.dirname) }),
      ],
      outputFile: { json: resolve(packageDir, ".reports", overrides.report ?? "vitest.json") },
    },
  });
}
