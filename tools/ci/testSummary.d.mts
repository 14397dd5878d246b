// Types for testSummary.mjs (used by packages/cli/test/testTimes.test.ts).
import type { ErrorsReport } from "./errorsReporter.mjs";
export interface VitestJson {
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  testResults: { name: string; status: string; message: string; assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
}
export interface PackageReports {
  name: string;
  reports?: { report: string; json: VitestJson; errors?: ErrorsReport }[];
}
export declare function summarizeRun(
  packages: PackageReports[],
  times: { verdict: "ok" | "warn" | "fail"; message?: string },
  nxStatus: number | null,
): {
  passed: number;
  failed: number;
  skipped: number;
  packageLines: string[];
  warnings: string[];
  skippedNames: string[];
  failedNames: string[];
  summary: string;
  exitCode: 0 | 1;
};
