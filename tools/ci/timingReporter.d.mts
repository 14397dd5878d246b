// Types for timingReporter.mjs (used by vitest.shared.ts).
import type { Reporter } from "vitest/reporters";
export default class TimingReporter implements Reporter {
  constructor(options: { outputFile: string; root: string });
}
