// Writes a GGUF v3 file laid out exactly as llama.cpp's gguf_write does: header, tensor infos, padding to the
// alignment, then each tensor's data padded to the alignment, tensors back to back in header order (the
// loader rejects any other offsets). Tensor data is pulled from the caller one tensor (or one piece of a
// tensor) at a time, so a model far larger than memory can be written. The file appears under its final
// name only when complete: we write a temporary file next to it and rename it.
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { encodeHeader, type PlannedTensor } from "./encodeHeader.js";
import { FileSink } from "./fileSink.js";
import { GgufError } from "./ggufError.js";
import { byteSizeOf, encodeValues, isEncodable } from "./tensorEncoding.js";
import {
  alignUp,
  GGUF_ALIGNMENT_KEY,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAX_DIMS,
  GGUF_MAX_TENSOR_NAME_BYTES,
  GGML_TYPES,
  type GgmlType,
  type GgufValue,
} from "./types.js";

/** Float32Array: values, encoded by the writer to the tensor's type. Uint8Array: bytes already in that type. */
export type TensorChunk = Float32Array | Uint8Array;
export type TensorProducer = () => TensorChunk | Promise<TensorChunk> | Iterable<TensorChunk> | AsyncIterable<TensorChunk>;

export interface GgufTensorInput {
  readonly name: string;
  /** ggml order: shape[0] (ne[0]) is the fastest-varying dimension, e.g. token_embd is [n_embd, n_vocab]. */
  readonly shape: readonly number[];
  readonly type: GgmlType;
  /**
   * The tensor's contents, or a function called when the writer reaches this tensor (so only one tensor
   * need exist at a time); a generator function may yield the tensor in pieces. Float pieces of a
   * quantized type must each be a whole number of blocks (multiples of 32 values for Q8_0).
   */
  readonly data: TensorChunk | TensorProducer;
}

/** A Map, an array of [key, value] pairs, or a plain object (its insertion order is the file order). */
export type GgufMetadataInput =
  | ReadonlyMap<string, GgufValue>
  | Iterable<readonly [string, GgufValue]>
  | Readonly<Record<string, GgufValue>>;

export interface GgufWriteProgress {
  /** Index of the tensor being written (tensorCount once finished). */
  readonly tensorIndex: number;
  readonly tensorCount: number;
  readonly tensorName: string;
  readonly bytesWritten: number;
  readonly totalBytes: number;
}

export interface WriteGgufOptions {
  /** Metadata in the order it should appear. `general.alignment` is added (uint32) when absent. */
  readonly metadata: GgufMetadataInput;
  readonly tensors: readonly GgufTensorInput[];
  /** Defaults to `general.alignment` from the metadata, else 32. */
  readonly alignment?: number;
  /** Called after the header and after every piece of tensor data. */
  readonly onProgress?: (progress: GgufWriteProgress) => void;
}

export interface GgufWriteResult {
  readonly path: string;
  readonly fileSize: number;
  readonly alignment: number;
  readonly dataOffset: number;
  readonly tensors: readonly PlannedTensor[];
}

export async function writeGguf(path: string, options: WriteGgufOptions): Promise<GgufWriteResult> {
  const { metadata, alignment } = resolveMetadata(options);
  const planned = planTensors(options.tensors, alignment);
  const header = encodeHeader(metadata, planned, alignment);
  const dataBytes = planned.reduce((sum, t) => sum + alignUp(t.byteSize, alignment), 0);
  const totalBytes = header.length + dataBytes;

  const tmp = join(dirname(path), `.${basename(path)}.${process.pid}.${randomBytes(4).toString("hex")}.partial`);
  let file;
  try {
    file = await open(tmp, "wx");
  } catch (err) {
    throw new GgufError(`cannot create ${tmp} to write ${path}: ${(err as Error).message} (does the directory exist and is it writable?)`, { cause: err });
  }
  try {
    const sink = new FileSink(file);
    const progress = (tensorIndex: number, tensorName: string) =>
      options.onProgress?.({ tensorIndex, tensorCount: planned.length, tensorName, bytesWritten: sink.position, totalBytes });
    await sink.write(header);
    progress(0, "");
    for (const [i, t] of planned.entries()) {
      const input = options.tensors[i]!;
      let written = 0;
      for await (const chunk of chunksOf(input.data, t.name)) {
        const bytes = toBytes(t, chunk);
        if (written + bytes.length > t.byteSize) {
          throw new GgufError(`tensor ${t.name}: data exceeds the ${t.byteSize} bytes its shape [${t.shape.join(", ")}] and type ${t.type} take`);
        }
        await sink.write(bytes);
        written += bytes.length;
        progress(i, t.name);
      }
      if (written !== t.byteSize) {
        throw new GgufError(`tensor ${t.name}: got ${written} bytes of data, its shape [${t.shape.join(", ")}] and type ${t.type} take ${t.byteSize}`);
      }
      await sink.zeros(alignUp(t.byteSize, alignment) - t.byteSize);
    }
    await sink.flush();
    progress(planned.length, "");
    if (sink.position !== totalBytes) throw new GgufError(`internal error: wrote ${sink.position} bytes to ${path}, planned ${totalBytes}`);
    await file.sync();
    await file.close();
    file = undefined;
    await rename(tmp, path);
  } catch (err) {
    await file?.close().catch(() => {});
    await rm(tmp, { force: true });
    throw err instanceof GgufError ? err : new GgufError(`writing ${path} failed: ${(err as Error).message}`, { cause: err });
  }
  return { path, fileSize: totalBytes, alignment, dataOffset: header.length, tensors: planned };
}

function resolveMetadata(options: WriteGgufOptions): { metadata: [string, GgufValue][]; alignment: number } {
  const input = options.metadata;
  const entries: [string, GgufValue][] =
    Symbol.iterator in input
      ? Array.from(input as Iterable<readonly [string, GgufValue]>, ([k, v]) => [k, v])
      : Object.entries(input as Record<string, GgufValue>);
  const keys = new Set<string>();
  for (const [key] of entries) {
    if (typeof key !== "string" || key.length === 0 || Buffer.byteLength(key) > 0xffff) {
      throw new GgufError(`metadata key ${JSON.stringify(key)} must be a string of 1 to 65535 bytes`);
    }
    if (keys.has(key)) throw new GgufError(`metadata key ${JSON.stringify(key)} appears twice; llama.cpp rejects duplicate keys`);
    keys.add(key);
  }
  const given = entries.find(([k]) => k === GGUF_ALIGNMENT_KEY)?.[1];
  if (given !== undefined && given.type !== "uint32") {
    throw new GgufError(`${GGUF_ALIGNMENT_KEY} must be uint32 (llama.cpp rejects other types), got ${given.type}`);
  }
  const fromMetadata = given?.value as number | undefined;
  if (options.alignment !== undefined && fromMetadata !== undefined && options.alignment !== fromMetadata) {
    throw new GgufError(`alignment ${options.alignment} contradicts ${GGUF_ALIGNMENT_KEY} = ${fromMetadata} in the metadata; pass one of them`);
  }
  const alignment = options.alignment ?? fromMetadata ?? GGUF_DEFAULT_ALIGNMENT;
  if (!Number.isInteger(alignment) || alignment < 1 || alignment > 0xffffffff || (alignment & (alignment - 1)) !== 0) {
    throw new GgufError(`alignment ${alignment} is not a power of two`);
  }
  if (given === undefined) entries.push([GGUF_ALIGNMENT_KEY, { type: "uint32", value: alignment }]);
  return { metadata: entries, alignment };
}

function planTensors(tensors: readonly GgufTensorInput[], alignment: number): PlannedTensor[] {
  const names = new Set<string>();
  let offset = 0;
  return tensors.map((t) => {
    const what = `tensor ${JSON.stringify(t.name)}`;
    const nameBytes = Buffer.byteLength(t.name);
    if (nameBytes === 0 || nameBytes > GGUF_MAX_TENSOR_NAME_BYTES) {
      throw new GgufError(`${what}: names must have 1 to ${GGUF_MAX_TENSOR_NAME_BYTES} bytes (ggml's GGML_MAX_NAME)`);
    }
    if (names.has(t.name)) throw new GgufError(`${what} appears twice`);
    names.add(t.name);
    const traits = GGML_TYPES[t.type];
    if (traits === undefined) throw new GgufError(`${what}: unknown ggml type ${JSON.stringify(t.type)}`);
    if (t.shape.length < 1 || t.shape.length > GGUF_MAX_DIMS || !t.shape.every((d) => Number.isSafeInteger(d) && d > 0)) {
      throw new GgufError(`${what}: shape [${t.shape.join(", ")}] must have 1 to ${GGUF_MAX_DIMS} positive integer dimensions`);
    }
    if (t.shape[0]! % traits.blockSize !== 0) {
      throw new GgufError(`${what}: ${t.type} packs ${traits.blockSize} values per block, so shape[0] = ${t.shape[0]} must be a multiple of ${traits.blockSize}`);
    }
    const byteSize = byteSizeOf(t.type, t.shape.reduce((a, b) => a * b, 1));
    const planned: PlannedTensor = { name: t.name, shape: [...t.shape], type: t.type, offset, byteSize };
    offset += alignUp(byteSize, alignment);
    return planned;
  });
}

async function* chunksOf(data: TensorChunk | TensorProducer, name: string): AsyncIterable<TensorChunk> {
  const produced = typeof data === "function" ? await data() : data;
  // Typed arrays are iterable too (of numbers), so test for a single chunk first.
  if (ArrayBuffer.isView(produced)) {
    yield produced;
    return;
  }
  if (produced === null || typeof produced !== "object" || !(Symbol.iterator in produced || Symbol.asyncIterator in produced)) {
    throw new GgufError(`tensor ${name}: its data function returned ${String(produced)}, not a Float32Array, Uint8Array or an iterable of them`);
  }
  yield* produced;
}

function toBytes(t: PlannedTensor, chunk: TensorChunk): Uint8Array {
  if (chunk instanceof Uint8Array) return chunk;
  if (!(chunk instanceof Float32Array)) {
    throw new GgufError(`tensor ${t.name}: data pieces must be Float32Array (values) or Uint8Array (encoded bytes)`);
  }
  if (!isEncodable(t.type)) {
    throw new GgufError(`tensor ${t.name}: the writer encodes only F32, F16 and Q8_0; pass ${t.type} data as already encoded Uint8Array bytes`);
  }
  const blockSize = GGML_TYPES[t.type].blockSize;
  if (chunk.length % blockSize !== 0) {
    throw new GgufError(`tensor ${t.name}: a piece of ${chunk.length} values is not a whole number of ${t.type} blocks (${blockSize} values each)`);
  }
  return encodeValues(t.type, chunk);
}
