// Types for errorsReporter.mjs (used by vitest.shared.ts).
import type { Reporter } from "vitest/reporters";
export interface ErrorsReport {
  errors: { file?: string; suite?: string; message: string }[];
}
export default class ErrorsReporter implements Reporter {
  constructor(options: { outputFile: string; root: string });
}
