// Types for prose-numbers.mjs (used by packages/cli/test/proseNumbers.test.ts).
export interface ProseNumber {
  line: number;
  raw: string;
  written: string;
  digits: string;
  unit: string;
  approx: boolean;
}
export interface DeclaredSetting {
  file: string;
  says: string;
  source?: [path: string, pattern: RegExp];
  check?: () => string;
  why?: string;
}
export declare function markdownFiles(dir?: string): string[];
export declare function staleSettings<S extends DeclaredSetting>(settings: readonly S[], read?: (path: string) => string): (S & { problem: string })[];
export declare function splitProse(text: string): { prose: string[]; generated: string };
export declare function measuredNumbers(proseLines: readonly string[]): ProseNumber[];
export declare function traceable(n: ProseNumber, generatedText: string): boolean;
export declare function untracedNumbers<S extends DeclaredSetting>(
  settings: readonly S[],
  docs?: readonly { file: string; text: string }[],
): { missing: { file: string; line: number; number: string; text: string }[]; unusedSettings: S[] };
