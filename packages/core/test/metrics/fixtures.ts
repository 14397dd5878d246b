// Loads the golden fixtures written by tools/reference (inputs in cases.json, reference outputs
// in expected.json) and offers a float comparison that records the largest error seen, so a run
// with METRICS_REPORT_ERROR=1 prints how far we are from the Python references.
import { readFileSync } from "node:fs";
import { expect } from "vitest";

export interface FixtureCase {
  readonly id: string;
  readonly reference: string;
  readonly candidate: string;
}

export interface ExpectedBleu {
  readonly score: number;
  readonly counts: number[];
  readonly totals: number[];
  readonly precisions?: number[];
  readonly bp: number;
  readonly sysLen: number;
  readonly refLen: number;
}

export interface Cases {
  readonly cases: FixtureCase[];
  readonly corpora: { id: string; hypotheses: string[]; references: (string | null)[][] }[];
  readonly sentenceMultiRef: { id: string; hypothesis: string; references: string[] }[];
  readonly bleuOptionCases: { caseId: string; options: Record<string, unknown> }[];
  readonly tokenize13a: string[];
  readonly stemWords: string[];
}

export interface ExpectedCase {
  readonly id: string;
  /** [p, r, f] of rouge1, rouge2, rougeL, rougeLsum, flattened. */
  readonly rouge: { plain: number[]; stemmed: number[] };
  readonly jaccard: { plain: number; stemmed: number };
  readonly sentenceBleu: ExpectedBleu;
  readonly tokens?: { reference: string[]; candidate: string[]; referenceStemmed: string[]; candidateStemmed: string[] };
  readonly tokenize13a?: { reference: string; candidate: string };
}

export interface Expected {
  readonly generatedWith: Record<string, string>;
  readonly cases: ExpectedCase[];
  readonly corpora: { id: string; bleu: ExpectedBleu }[];
  readonly sentenceMultiRef: { id: string; bleu: ExpectedBleu }[];
  readonly bleuOptionCases: ExpectedBleu[];
  readonly tokenize13a: string[];
  readonly stems: string[];
  readonly pythonWhitespace: number[];
  readonly lowercaseToAscii: [number, string][];
}

function load<T>(name: string): T {
  return JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8")) as T;
}

export const cases = load<Cases>("cases.json");
export const expected = load<Expected>("expected.json");

/** Tolerance for every golden number (the references and we use the same float operations). */
export const TOLERANCE = 1e-9;

let maxError = 0;
let maxErrorLabel = "";

/** Asserts |actual - expected| <= 1e-9 and records the largest difference seen. */
export function expectClose(actual: number, expectedValue: number, label: string): void {
  const error = Math.abs(actual - expectedValue);
  if (error > maxError) {
    maxError = error;
    maxErrorLabel = label;
  }
  expect(Number.isFinite(actual), `${label}: not finite (${actual})`).toBe(true);
  expect(error, `${label}: got ${actual}, expected ${expectedValue}`).toBeLessThanOrEqual(TOLERANCE);
}

export function reportMaxError(area: string): void {
  if (process.env.METRICS_REPORT_ERROR) {
    console.log(`[${area}] max abs error vs reference: ${maxError} (${maxErrorLabel || "all exact"})`);
  }
}
