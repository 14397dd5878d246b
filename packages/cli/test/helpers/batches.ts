// What the batch command tests share: the demo questions, batch files built from them, polling, reading results.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { BatchItemResult } from "@attr-rag/contracts";
import type { RemoteBatches } from "@attr-rag/gateway";
import { REPO_ROOT } from "./runCli.js";

export const QUESTIONS: string[] = readFileSync(join(REPO_ROOT, "examples/demo-corpus/questions.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((l) => (JSON.parse(l) as { question: string }).question);

/** `<dir>/<name>.jsonl` with n rows `{"id": "<name>-i", "question": …, ...extra}`. */
export function rowsFile(dir: string, name: string, n: number, extra: Record<string, unknown> = {}): string {
  const path = join(dir, `${name}.jsonl`);
  writeFileSync(path, Array.from({ length: n }, (_, i) => JSON.stringify({ id: `${name}-${i}`, question: QUESTIONS[i % QUESTIONS.length], ...extra })).join("\n") + "\n");
  return path;
}

/** Polls `probe` until it gives a value; errors count as "not yet" (a gateway restarting, NATS coming back). */
export async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastError ? ` (last error: ${(lastError as Error).message})` : ""}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export async function allResults(batches: RemoteBatches, batchId: string): Promise<BatchItemResult[]> {
  const out: BatchItemResult[] = [];
  await batches.results(batchId, 0, false, (r) => void out.push(r), new AbortController().signal);
  return out;
}
