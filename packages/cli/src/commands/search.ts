import type { Command } from "commander";
import { ChunkStore, MAX_K, startEmbedder, storeErrorAsInput, StoreNotFoundError, USE_LITE_ID, type Embedder, type SearchHit } from "@attr-rag/index";
import { CliError } from "../cliError.js";
import { InputError, parseJsonLines, stringField } from "@attr-rag/core";
import { positiveInt } from "../parseArgs.js";
import { readStdin } from "../readStdin.js";

const MODES = ["dense", "bm25", "hybrid"] as const;
type Mode = (typeof MODES)[number];

interface SearchOptions {
  store: string;
  k: string;
  mode: string;
  embedder?: string;
  query?: string;
  json?: boolean;
}

interface Query {
  readonly id: string;
  readonly question: string;
}

/** Validates every input line before any search runs, so bad input gives no partial output. */
function parseQueries(input: string): Query[] {
  const queries = parseJsonLines(input).map((entry) => {
    const raw = (entry.value as Record<string, unknown> | null)?.["id"];
    const id = typeof raw === "number" ? String(raw) : stringField(entry, "id");
    return { id, question: stringField(entry, "question") };
  });
  if (queries.length === 0) throw new CliError('no queries on standard input; give JSON lines {"id","question"} or --query TEXT');
  return queries;
}

/** The embedder that built the store: `--embedder` when given, else the recorded one if it can be started by name. */
async function queryEmbedder(store: ChunkStore, spec: string | undefined): Promise<Embedder> {
  if (spec === undefined && store.embedder.id !== USE_LITE_ID) {
    throw new CliError(`store ${store.path} was built by embedder "${store.embedder.id}"; pass --embedder gguf:/path/to/that/model.gguf (or use --mode bm25)`);
  }
  const embedder = await startEmbedder(spec ?? "use-lite");
  if (embedder.id !== store.embedder.id || embedder.dimensions !== store.embedder.dimensions) {
    await embedder.dispose();
    throw new CliError(
      `store ${store.path} was built by embedder "${store.embedder.id}" (${store.embedder.dimensions} dimensions), not "${embedder.id}" ` +
        `(${embedder.dimensions}); vectors of different embedders are not comparable — use the store's embedder`,
    );
  }
  return embedder;
}

function toJsonHit(h: SearchHit) {
  return { chunk_id: h.chunkId, doc_id: h.docId, ordinal: h.ordinal, score: h.score, text: h.text };
}

export function registerSearchCommand(program: Command): void {
  program
    .command("search")
    .summary("retrieve chunks from a store for questions (dense, BM25 or hybrid)")
    .description(
      [
        'Reads JSON lines {"id","question"} on stdin (other fields are ignored, so questions.jsonl works as is), or one',
        "--query TEXT (id \"query\"), and writes per query the top --k chunks. With --json, one line per query:",
        '  {"id", "hits": [{"chunk_id","doc_id","ordinal","score","text"}]}',
        "Scores are higher-is-better: cosine (dense), −bm25() (bm25), the fused score (hybrid, with the fusion",
        "recorded in the store by `eval retrieval --tune`, else the library default).",
        "Dense and hybrid embed the questions with the store's embedder.",
      ].join("\n"),
    )
    .requiredOption("--store <dir>", "store directory (made by attr-rag ingest)")
    .option("--k <n>", `hits per query, 1..${MAX_K}`, "10")
    .option("--mode <mode>", MODES.join(" | "), "hybrid")
    .option("--embedder <spec>", "the store's embedder (needed for gguf stores in dense/hybrid mode)")
    .option("--query <text>", "one question instead of JSON lines on stdin")
    .option("--json", "write JSON lines")
    .action(async (o: SearchOptions) => {
      const k = positiveInt("--k", o.k);
      if (k > MAX_K) throw new CliError(`--k must be at most ${MAX_K}, got ${k}`);
      if (!(MODES as readonly string[]).includes(o.mode)) throw new CliError(`--mode must be one of ${MODES.join(", ")}, got "${o.mode}"`);
      const mode = o.mode as Mode;
      if (o.query !== undefined && o.query.trim() === "") throw new CliError("--query is empty");
      const queries = o.query !== undefined ? [{ id: "query", question: o.query }] : parseQueries(await readStdin());

      const store = await ChunkStore.open(o.store).catch((err: unknown) => {
        if (err instanceof StoreNotFoundError) {
          throw new CliError(`no store at ${o.store}: ${err.message.split(";")[0]}; build one with \`attr-rag ingest --store ${o.store} FILE...\``, 2, { cause: err });
        }
        throw storeErrorAsInput(err);
      });
      let embedder: Embedder | undefined;
      try {
        let vectors: Float32Array[] = [];
        if (mode !== "bm25") {
          embedder = await queryEmbedder(store, o.embedder);
          const e = embedder;
          if (store.stats().missingVectors > 0) await store.rebuildVectors((texts) => e.embed(texts));
          vectors = await e.embed(queries.map((q) => q.question));
        }
        const lines: string[] = [];
        for (const [i, q] of queries.entries()) {
          let hits: SearchHit[];
          try {
            hits =
              mode === "bm25"
                ? store.searchBm25(q.question, { k })
                : mode === "dense"
                  ? store.searchDense(vectors[i]!, { k })
                  : store.searchHybrid(q.question, vectors[i]!, { k });
          } catch (err) {
            const cli = storeErrorAsInput(err);
            if (cli instanceof InputError) throw new CliError(`query "${q.id}": ${cli.message}`, cli.exitCode, { cause: err });
            throw err;
          }
          if (o.json) lines.push(`${JSON.stringify({ id: q.id, hits: hits.map(toJsonHit) })}\n`);
          else {
            lines.push(`${q.id}: ${q.question}\n`);
            hits.forEach((h, r) => {
              const preview = h.text.replace(/\s+/g, " ").slice(0, 100);
              lines.push(`  ${String(r + 1).padStart(3)}. ${h.docId}#${h.ordinal}  ${h.score.toFixed(4)}  ${preview}\n`);
            });
          }
        }
        process.stdout.write(lines.join(""));
      } finally {
        await embedder?.dispose();
        await store.close();
      }
    });
}
