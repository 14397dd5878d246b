import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command } from "commander";
import { defaultModelPath } from "@attr-rag/engine";
import { ChunkStore, readDocuments, startEmbedder, storeErrorAsInput } from "@attr-rag/index";
import { AskPrinter } from "../ask/askPrinter.js";
import { CliError } from "../cliError.js";
import { abortOnSigint, askOnce, writeReport } from "./ask.js";

const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..");
export const DEMO_CORPUS = join(REPO_ROOT, "examples/demo-corpus/corpus.jsonl");
export const DEMO_QUESTION = "Explain all the required steps of the acetaminophen synthesis.";

/** The demo's generator: $ATTR_RAG_MODEL (a path or cache name), else the repository's examples/models/stories260K.gguf. */
export function demoModelPath(): string {
  let path: string;
  try {
    path = defaultModelPath();
  } catch (err) {
    throw new CliError(`no demo model: ${(err as Error).message}`, 2, { cause: err });
  }
  if (!existsSync(path)) {
    throw new CliError(`no demo model: ${path} is missing from this checkout (restore it with \`git checkout -- examples/models\`), or set ATTR_RAG_MODEL to any llama.cpp GGUF`, 2);
  }
  return path;
}

/** Builds (or refreshes) the demo store; unchanged documents are skipped, so a second run is quick. */
export async function ingestDemoCorpus(storeDir: string, label = "demo", embedderSpec = "use-lite"): Promise<void> {
  const embedder = await startEmbedder(embedderSpec);
  try {
    const store = await ChunkStore.open(storeDir, { create: true, embedder: { id: embedder.id, dimensions: embedder.dimensions }, embed: (t) => embedder.embed(t) }).catch((err: unknown) => {
      throw storeErrorAsInput(err);
    });
    try {
      let written = 0;
      let documents = 0;
      try {
        for await (const item of readDocuments([DEMO_CORPUS])) {
          const result = await store.upsertDocument(item.document, (texts) => embedder.embed(texts));
          documents++;
          if (result.status !== "unchanged") written += result.chunkCount;
        }
      } catch (err) {
        throw storeErrorAsInput(err);
      }
      process.stderr.write(`${label}: ${documents} documents in ${storeDir} (${written} chunks embedded now)\n`);
    } finally {
      await store.close();
    }
  } finally {
    await embedder.dispose();
  }
}

/** `attr-rag demo` (what `npm run demo` runs): ingest the demo corpus, ask one procedural question end to end. */
export function registerDemoCommand(program: Command): void {
  program
    .command("demo")
    .summary("ingest the demo corpus and answer one procedural question end to end (embedded, no servers)")
    .description(
      [
        "Ingests examples/demo-corpus into --store (default .cache/demo-store), then runs `attr-rag ask` on",
        `"${DEMO_QUESTION}" with the model in $ATTR_RAG_MODEL or examples/models/stories260K.gguf`,
        "(a tiny TinyStories model: the mechanics are real, the answer is nonsense), and writes an HTML report.",
      ].join("\n"),
    )
    .option("--store <dir>", "demo store directory", ".cache/demo-store")
    .option("--question <text>", "the question", DEMO_QUESTION)
    .option("--k <n>", "chunks to retrieve", "8")
    .option("--max-tokens <n>", "max new tokens per answer", "96")
    .option("--report <file.html>", "HTML report", ".cache/demo-report.html")
    .option("--json", "print the events as JSON lines")
    .action(async (o: { store: string; question: string; k: string; maxTokens: string; report: string; json?: boolean }) => {
      const model = demoModelPath();
      await ingestDemoCorpus(o.store);
      process.stderr.write(`demo: asking "${o.question}" with ${model}\n`);
      const printer = new AskPrinter(o.json ?? false);
      const controller = new AbortController();
      const stop = abortOnSigint(controller);
      try {
        await askOnce(o.question, { store: o.store, model, k: o.k, maxTokens: o.maxTokens }, printer, controller.signal);
      } finally {
        stop();
      }
      writeReport(o.report, o.question, printer);
      process.stderr.write(`demo: report written to ${o.report}\n`);
    });
}
