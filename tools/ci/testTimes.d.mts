// Types for testTimes.mjs (used by packages/cli/test/testTimes.test.ts).
export interface TimedTest { name: string; state: string; seconds: number; assertions: number }
export interface TimedFile { file: string; seconds: number; tests: TimedTest[] }
export interface TimingReport { pkg: string; report: string; wallSeconds: number; files: TimedFile[] }
export declare const BUDGET: { warnMinutes: number; failMinutes: number };
export declare function summarizeTimes(
  reports: TimingReport[],
  suiteSeconds: number,
  budget?: { warnMinutes: number; failMinutes: number },
): { lines: string[]; verdict: "ok" | "warn" | "fail"; message?: string; tests: number; assertions: number };
