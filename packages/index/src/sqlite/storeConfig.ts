import { chunkDocument, DEFAULT_CHUNKER_OPTIONS, type ChunkerOptions } from "@attr-rag/core";
import { EmbedderMismatchError, StoreConfigMismatchError, StoreError } from "../errors.js";
import { validateFusion, type FusionSettings } from "../search/fusionSettings.js";
import type { EmbedderInfo, OpenStoreOptions, VectorQuantization } from "../types.js";
import { deleteMeta, readMeta, writeMeta } from "./meta.js";
import type { Db } from "./openDatabase.js";

/** HNSW graph parameters, recorded per store (usearch's defaults would change under us with its versions). */
export interface HnswParams {
  readonly connectivity: number;
  readonly expansionAdd: number;
  readonly expansionSearch: number;
}

/**
 * New stores: a graph built with half usearch's default expansion (64, not 128) and searched with a wider one
 * (96, not 64). Insertion was most of ingest's cost at scale; on 100 k of the benchmark's 512-d f16 vectors this
 * inserts twice as fast (4,117 vs 2,069 inserts/s over the last quarter, two threads) with the same recall@10
 * against exact cosine (0.653 vs 0.654, 100 questions) and the same search time (~0.5 ms): recall follows the
 * search's expansion far more than the build's. Stores created before keep the parameters they recorded
 * (connectivity 16, expansion 128 / 64).
 */
export const DEFAULT_HNSW: HnswParams = { connectivity: 16, expansionAdd: 64, expansionSearch: 96 };

/**
 * New stores keep f16 vectors: half the memory and file of f32, and faster inserts (50 k vectors: 1,986 →
 * 4,121 inserts/s, recall@10 0.700 → 0.707). Unit vectors lose nothing a ranking can see at f16's precision
 * (a cosine moves by ~1e-4). Stores created before keep what they recorded.
 */
export const DEFAULT_QUANTIZATION: VectorQuantization = "f16";

/** Everything fixed when a store is created; recorded in `meta` and checked on every open. */
export interface StoreConfig {
  readonly embedder: EmbedderInfo;
  readonly chunker: Required<ChunkerOptions>;
  readonly quantization: VectorQuantization;
  readonly hnsw: HnswParams;
}

/**
 * Returns the recorded configuration, after checking the caller's options against it; a store without
 * one (just created, or a crash right after creation) is initialised from the options.
 */
export function loadOrInitConfig(db: Db, options: OpenStoreOptions, storeDir: string): StoreConfig {
  const meta = readMeta(db);
  const storedId = meta.get("embedder_id");
  if (storedId === undefined) return initConfig(db, options, storeDir);

  const stored: StoreConfig = {
    embedder: { id: storedId, dimensions: Number(meta.get("dimensions")) },
    chunker: JSON.parse(meta.get("chunker") ?? "null") as Required<ChunkerOptions>,
    quantization: meta.get("quantization") as VectorQuantization,
    hnsw: JSON.parse(meta.get("hnsw") ?? "null") as HnswParams,
  };
  const supplied = options.embedder;
  if (supplied && (supplied.id !== stored.embedder.id || supplied.dimensions !== stored.embedder.dimensions)) {
    throw new EmbedderMismatchError(stored.embedder, supplied, storeDir);
  }
  if (options.chunker) {
    const wanted = normalizeChunker(options.chunker);
    if (wanted.maxChars !== stored.chunker.maxChars || wanted.overlapChars !== stored.chunker.overlapChars) {
      throw new StoreConfigMismatchError(
        `store ${storeDir} chunks with ${JSON.stringify(stored.chunker)}, not ${JSON.stringify(wanted)}; ` +
          `chunker settings are fixed when a store is created — omit the option or ingest into a new store`,
      );
    }
  }
  if (options.quantization && options.quantization !== stored.quantization) {
    throw new StoreConfigMismatchError(
      `store ${storeDir} holds ${stored.quantization} vectors, not ${options.quantization}; quantization is fixed when a store is created`,
    );
  }
  return stored;
}

function initConfig(db: Db, options: OpenStoreOptions, storeDir: string): StoreConfig {
  if (!options.embedder) {
    throw new StoreError(`store ${storeDir} has no recorded embedder yet; pass options.embedder ({ id, dimensions }) to initialise it`);
  }
  const config: StoreConfig = {
    embedder: { id: options.embedder.id, dimensions: options.embedder.dimensions },
    chunker: normalizeChunker(options.chunker ?? {}),
    quantization: options.quantization ?? DEFAULT_QUANTIZATION,
    hnsw: DEFAULT_HNSW,
  };
  writeMeta(db, {
    embedder_id: config.embedder.id,
    dimensions: String(config.embedder.dimensions),
    chunker: JSON.stringify(config.chunker),
    quantization: config.quantization,
    hnsw: JSON.stringify(config.hnsw),
    created_at: new Date().toISOString(),
  });
  return config;
}

/** Fills defaults and lets core's chunker reject bad values, so the rules live in one place. */
export function normalizeChunker(options: ChunkerOptions): Required<ChunkerOptions> {
  const chunker = { ...DEFAULT_CHUNKER_OPTIONS, ...options };
  try {
    chunkDocument("probe", "probe", chunker);
  } catch (err) {
    throw new StoreError(`invalid chunker options ${JSON.stringify(options)}: ${(err as Error).message}`, { cause: err });
  }
  return { maxChars: chunker.maxChars, overlapChars: chunker.overlapChars };
}

/** Meta key of the hybrid fusion chosen for this store (JSON FusionSettings); absent: the library default. */
const FUSION_KEY = "fusion";

/**
 * The recorded hybrid fusion. Unlike the fixed settings above it can change over the store's life (a tuner
 * records it), and an unreadable one (say, a method from a newer version) must not lock the store: it comes
 * back as `error`, so BM25, dense and explicit fusions keep working and setFusion() can replace it.
 */
export function readFusion(db: Db, storeDir: string): { fusion?: FusionSettings; error?: string } {
  const raw = readMeta(db).get(FUSION_KEY);
  if (raw === undefined) return {};
  try {
    return { fusion: validateFusion(JSON.parse(raw), `store ${storeDir}`) };
  } catch (err) {
    return {
      error:
        `store ${storeDir} records a hybrid fusion this version cannot use (${raw}: ${(err as Error).message}); ` +
        `record a new one (setFusion, or attr-rag eval retrieval --tune) or clear it with setFusion(undefined)`,
    };
  }
}

/** Records the fusion (one upsert, durable like every write), or removes it so the library default applies. */
export function writeFusion(db: Db, fusion: FusionSettings | undefined): void {
  if (fusion === undefined) deleteMeta(db, FUSION_KEY);
  else writeMeta(db, { [FUSION_KEY]: JSON.stringify(fusion) });
}
