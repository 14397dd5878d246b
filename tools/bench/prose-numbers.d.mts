// Types for prose-numbers.mjs (used by packages/cli/test/proseNumbers.test.ts).
export interface ProseNumber {
  line: number;
  raw: string;
  digits: string;
  unit: string;
  approx: boolean;
}
export interface DeclaredSetting {
  file: string;
  says: string;
}
export declare function splitProse(text: string): { prose: string[]; generated: string };
export declare function measuredNumbers(proseLines: readonly string[]): ProseNumber[];
export declare function traceable(n: ProseNumber, generatedText: string): boolean;
export declare function untracedNumbers<S extends DeclaredSetting>(
  settings: readonly S[],
  docs?: readonly { file: string; text: string }[],
): { missing: { file: string; line: number; number: string; text: string }[]; unusedSettings: S[] };
