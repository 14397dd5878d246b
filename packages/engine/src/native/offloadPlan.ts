// Whether a model would fit a device with every layer offloaded (--gpu-layers -1), and how many KV cells
// would fit beside it: read from the GGUF header alone, so `attr-rag doctor` can answer for a 7B model
// without loading it. An estimate: llama.cpp also needs compute buffers (a few hundred MiB on a 7B model),
// which the margin stands for.
import type { GgufHeader, GgufValue } from "../gguf/types.js";

/** Room kept for llama.cpp's compute buffers and the driver. */
export const OFFLOAD_MARGIN_BYTES = 512 * 2 ** 20;

export interface OffloadPlan {
  readonly architecture: string;
  readonly layers: number;
  /** Bytes of the model's tensors. */
  readonly modelBytes: number;
  /** K and V bytes one KV cell takes over all layers (f16 cache). */
  readonly kvBytesPerCell: number;
  /** Whether every layer fits in `freeBytes` with the margin. */
  readonly fits: boolean;
  /** KV cells that fit beside the model (0 when it does not fit). */
  readonly cellsThatFit: number;
}

function num(meta: ReadonlyMap<string, GgufValue>, key: string): number | undefined {
  const v = meta.get(key);
  if (v === undefined) return undefined;
  if (v.type === "array") return undefined;
  return typeof v.value === "number" ? v.value : typeof v.value === "bigint" ? Number(v.value) : undefined;
}

export function planOffload(header: GgufHeader, freeBytes: number): OffloadPlan {
  const meta = header.metadata;
  const arch = meta.get("general.architecture");
  const architecture = arch?.type === "string" ? arch.value : "unknown";
  const layers = num(meta, `${architecture}.block_count`) ?? 0;
  const embd = num(meta, `${architecture}.embedding_length`) ?? 0;
  const heads = num(meta, `${architecture}.attention.head_count`) ?? 1;
  const kvHeads = num(meta, `${architecture}.attention.head_count_kv`) ?? heads;
  const headDim = num(meta, `${architecture}.attention.key_length`) ?? (heads > 0 ? embd / heads : 0);
  const kvBytesPerCell = 2 * layers * kvHeads * headDim * 2;
  const modelBytes = header.tensors.reduce((n, t) => n + t.byteSize, 0);
  const room = freeBytes - modelBytes - OFFLOAD_MARGIN_BYTES;
  const fits = room >= 0;
  return { architecture, layers, modelBytes, kvBytesPerCell, fits, cellsThatFit: fits && kvBytesPerCell > 0 ? Math.floor(room / kvBytesPerCell) : 0 };
}
