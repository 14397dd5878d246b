import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { defaultModelPath } from "@attr-rag/engine";
import { fromRunCache } from "../../../../tools/ci/testCache.mjs";

export const MAIN = fileURLToPath(new URL("../../dist/main.js", import.meta.url));
export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const DEMO_CORPUS = join(REPO_ROOT, "examples/demo-corpus/corpus.jsonl");
/** examples/models/stories260K.gguf, or ATTR_RAG_MODEL (resolved here, then passed to the CLI explicitly). */
export const TEST_MODEL = defaultModelPath();

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `attr-rag ARGS` to completion (ATTR_RAG_* variables cleared, see cleanEnv, so only ARGS and `env` count). */
export function runCli(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...cleanEnv(), ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * `attr-rag ingest --store STORE` of the demo corpus, for tests that start from it. Under `npm test` the first
 * file ingests and the others copy its store (tools/ci/testCache.mjs); a copy reports exit 0 and says so.
 * The ingest command itself is tested in ingestSearch.test.ts.
 */
export async function ingestDemoCorpus(store: string): Promise<CliRun> {
  let run: CliRun = { code: 0, stdout: "", stderr: "copied from this test run's demo store" };
  await fromRunCache("cli-demo-store", store, async (dest) => {
    run = await runCli(["ingest", "--store", dest, DEMO_CORPUS]);
    if (run.code !== 0) throw new Error(`attr-rag ingest exited ${run.code}: ${run.stderr}`);
  });
  return run;
}

/** A `serve`-like command until it prints `listening on ADDR` (and `http on ADDR` when given --http-port). */
export function startServer(args: readonly string[]): Promise<{ child: ChildProcess; address: string; http?: string; stop(): Promise<number | null> }> {
  const child = spawn(process.execPath, [MAIN, ...args], { stdio: ["ignore", "pipe", "pipe"], env: cleanEnv() });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += d;
      const m = /listening on (\S+)/.exec(out);
      const http = /http on (\S+)/.exec(out);
      if (m && (http || !args.includes("--http-port"))) {
        resolve({
          child,
          address: m[1]!,
          http: http?.[1],
          stop: () => {
            child.kill("SIGTERM");
            return exited;
          },
        });
      }
    });
    void exited.then((code) => reject(new Error(`server exited ${code}: ${stderr}`)));
  });
}

/**
 * The environment without ATTR_RAG_* variables, but for ATTR_RAG_THREADS=1: on the test model one engine thread
 * is faster than two (the second costs more in synchronisation than it computes), and a spinning second
 * thread per process oversubscribes a two-core machine while clusters run. A test's own env still overrides it.
 */
export function cleanEnv(): NodeJS.ProcessEnv {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("ATTR_RAG_"))), ATTR_RAG_THREADS: "1" };
}
