// Parses everything in a GGUF file except the tensor data: version, metadata (types kept), tensor infos,
// alignment and where the data section starts. Only the header bytes are read, in a bounded window, so this
// is cheap on multi-GB models. Checks mirror llama.cpp's gguf.cpp so a file we accept, it accepts too.
import { GgufError } from "./ggufError.js";
import { PositionalReader } from "./positionalReader.js";
import {
  alignUp,
  GGUF_ALIGNMENT_KEY,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_MAX_DIMS,
  GGUF_SCALAR_SIZE,
  GGUF_TYPE_ARRAY,
  GGML_TYPES,
  ggmlTypeFromId,
  scalarTypeFromCode,
  type GgufArrayValue,
  type GgufHeader,
  type GgufScalarType,
  type GgufTensorInfo,
  type GgufValue,
} from "./types.js";

/** Reads the header of the GGUF file at `path`. Throws GgufError naming the file and offset on bad input. */
export async function readGgufHeader(path: string): Promise<GgufHeader> {
  const r = await PositionalReader.open(path);
  try {
    return await parseHeader(r, path);
  } finally {
    await r.close();
  }
}

async function parseHeader(r: PositionalReader, path: string): Promise<GgufHeader> {
  await r.ensure(24, "the GGUF header (magic, version, counts)");
  const magic = String.fromCharCode(...r.bytes(4));
  if (magic !== GGUF_MAGIC) {
    throw new GgufError(`${path} is not a GGUF file: it starts with ${JSON.stringify(magic)}, not "GGUF"`);
  }
  const version = r.u32();
  // v1 used 32-bit counts; v2 and v3 share this layout (v3 only added big-endian files, which we reject
  // below through the version check, as llama.cpp does).
  if (version !== 2 && version !== 3) {
    const hint = (version & 0xffff) === 0 ? " (a big-endian file? only little-endian GGUF is supported)" : "";
    throw new GgufError(`${path}: unsupported GGUF version ${version}${hint}; supported versions are 2 and 3`);
  }
  const tensorCount = toSafeNumber(r.u64(), path, "tensor count");
  const kvCount = toSafeNumber(r.u64(), path, "metadata count");
  // Each KV takes at least 13 bytes and each tensor info at least 24, so larger counts mean a corrupt file;
  // checking here stops garbage from driving a huge loop.
  if (kvCount * 13 + tensorCount * 24 > r.remaining) {
    throw new GgufError(
      `${path}: header claims ${kvCount} metadata entries and ${tensorCount} tensors, more than its ${r.fileSize} bytes can hold; the file is truncated or corrupt`,
    );
  }

  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < kvCount; i++) {
    const key = await readString(r, path, `metadata key #${i}`);
    if (key.length === 0) throw new GgufError(`${path}: metadata key #${i} is empty`);
    if (metadata.has(key)) throw new GgufError(`${path}: metadata key ${JSON.stringify(key)} appears twice`);
    metadata.set(key, await readValue(r, path, key));
  }

  const alignment = alignmentOf(metadata, path);
  const infos: Omit<GgufTensorInfo, "fileOffset">[] = [];
  const names = new Set<string>();
  for (let i = 0; i < tensorCount; i++) {
    const info = await readTensorInfo(r, path, i);
    if (names.has(info.name)) throw new GgufError(`${path}: tensor name ${JSON.stringify(info.name)} appears twice`);
    names.add(info.name);
    infos.push(info);
  }

  // The data section starts at the next multiple of the alignment, but only when there are tensors
  // (vocab-only files end right after their metadata).
  const dataOffset = tensorCount > 0 ? alignUp(r.position, alignment) : r.position;
  const tensors = infos.map((info): GgufTensorInfo => {
    if (info.offset % alignment !== 0) {
      throw new GgufError(`${path}: tensor ${info.name} has data offset ${info.offset}, not a multiple of the alignment ${alignment}`);
    }
    const fileOffset = dataOffset + info.offset;
    if (fileOffset + info.byteSize > r.fileSize) {
      throw new GgufError(
        `${path} is truncated: tensor ${info.name} needs bytes ${fileOffset}..${fileOffset + info.byteSize} but the file has ${r.fileSize}; download or generate it again`,
      );
    }
    return { ...info, fileOffset };
  });

  return { version, metadata, tensors, alignment, dataOffset, fileSize: r.fileSize };
}

function alignmentOf(metadata: ReadonlyMap<string, GgufValue>, path: string): number {
  const v = metadata.get(GGUF_ALIGNMENT_KEY);
  if (v === undefined) return GGUF_DEFAULT_ALIGNMENT;
  if (v.type !== "uint32") throw new GgufError(`${path}: ${GGUF_ALIGNMENT_KEY} must be uint32, found ${v.type}`);
  if (v.value === 0 || (v.value & (v.value - 1)) !== 0) {
    throw new GgufError(`${path}: ${GGUF_ALIGNMENT_KEY} is ${v.value}, not a power of two`);
  }
  return v.value;
}

function toSafeNumber(v: bigint, path: string, what: string): number {
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new GgufError(`${path}: ${what} ${v} is too large; the file is corrupt`);
  return Number(v);
}

async function readString(r: PositionalReader, path: string, what: string): Promise<string> {
  if (!r.has(8)) await r.ensure(8, `the length of ${what}`);
  const length = toSafeNumber(r.u64(), path, `length of ${what}`);
  if (!r.has(length)) await r.ensure(length, what);
  return r.utf8(length, what);
}

async function readTypeCode(r: PositionalReader, path: string, what: string): Promise<GgufScalarType | "array"> {
  await r.ensure(4, `the type of ${what}`);
  const code = r.u32();
  if (code === GGUF_TYPE_ARRAY) return "array";
  const type = scalarTypeFromCode(code);
  if (type === undefined) throw new GgufError(`${path}: ${what} has unknown GGUF value type ${code}; the file is corrupt or newer than this reader`);
  return type;
}

async function readValue(r: PositionalReader, path: string, key: string): Promise<GgufValue> {
  const type = await readTypeCode(r, path, `metadata ${key}`);
  if (type === "string") return { type, value: await readString(r, path, `the value of ${key}`) };
  if (type !== "array") {
    await r.ensure(GGUF_SCALAR_SIZE[type], `the value of ${key}`);
    return readFixedScalar(r, type, path, key);
  }
  const itemType = await readTypeCode(r, path, `items of ${key}`);
  if (itemType === "array") throw new GgufError(`${path}: ${key} is an array of arrays, which llama.cpp does not support`);
  await r.ensure(8, `the length of ${key}`);
  const count = toSafeNumber(r.u64(), path, `length of ${key}`);
  return readArray(r, path, key, itemType, count);
}

function readFixedScalar(r: PositionalReader, type: Exclude<GgufScalarType, "string">, path: string, key: string): GgufValue {
  return { type, value: readScalarValue(r, type, path, key) } as GgufValue;
}

/** One fixed-size value, already ensured in the window. */
function readScalarValue(r: PositionalReader, type: Exclude<GgufScalarType, "string">, path: string, key: string): number | bigint | boolean {
  switch (type) {
    case "uint8":
      return r.u8();
    case "int8":
      return r.i8();
    case "uint16":
      return r.u16();
    case "int16":
      return r.i16();
    case "uint32":
      return r.u32();
    case "int32":
      return r.i32();
    case "float32":
      return r.f32();
    case "float64":
      return r.f64();
    case "uint64":
      return r.u64();
    case "int64":
      return r.i64();
    case "bool": {
      const b = r.u8();
      if (b > 1) throw new GgufError(`${path}: ${key} holds bool byte ${b}; only 0 and 1 are valid`);
      return b === 1;
    }
  }
}

/** Numeric arrays are kept in typed arrays (a 150k-entry token_type array stays 600 KB). */
const ARRAY_ALLOC: Readonly<Record<Exclude<GgufScalarType, "string">, (n: number) => { [i: number]: number | bigint | boolean }>> = {
  uint8: (n) => new Uint8Array(n),
  int8: (n) => new Int8Array(n),
  uint16: (n) => new Uint16Array(n),
  int16: (n) => new Int16Array(n),
  uint32: (n) => new Uint32Array(n),
  int32: (n) => new Int32Array(n),
  float32: (n) => new Float32Array(n),
  float64: (n) => new Float64Array(n),
  uint64: (n) => new BigUint64Array(n),
  int64: (n) => new BigInt64Array(n),
  bool: (n) => new Array<boolean>(n),
};

async function readArray(r: PositionalReader, path: string, key: string, itemType: GgufScalarType, count: number): Promise<GgufArrayValue> {
  if (itemType === "string") {
    // Every string has an 8-byte length, so this bounds `count` before we loop on it.
    if (count * 8 > r.remaining) throw new GgufError(`${path}: ${key} claims ${count} strings, more than the file can hold`);
    const value: string[] = new Array<string>(count);
    for (let i = 0; i < count; i++) value[i] = await readString(r, path, `${key}[${i}]`);
    return { type: "array", itemType, value };
  }
  const size = GGUF_SCALAR_SIZE[itemType];
  if (count * size > r.remaining) throw new GgufError(`${path}: ${key} claims ${count} ${itemType} values, more than the file can hold`);
  const out = ARRAY_ALLOC[itemType](count);
  const perWindow = Math.max(1, Math.floor((1 << 20) / size));
  for (let start = 0; start < count; start += perWindow) {
    const end = Math.min(count, start + perWindow);
    await r.ensure((end - start) * size, `${key}[${start}..${end}]`);
    for (let i = start; i < end; i++) out[i] = readScalarValue(r, itemType, path, key);
  }
  return { type: "array", itemType, value: out } as GgufArrayValue;
}

async function readTensorInfo(r: PositionalReader, path: string, index: number): Promise<Omit<GgufTensorInfo, "fileOffset">> {
  const name = await readString(r, path, `the name of tensor #${index}`);
  await r.ensure(4, `the dimension count of tensor ${name}`);
  const nDims = r.u32();
  if (nDims > GGUF_MAX_DIMS) throw new GgufError(`${path}: tensor ${name} has ${nDims} dimensions; ggml allows at most ${GGUF_MAX_DIMS}`);
  await r.ensure(nDims * 8 + 4 + 8, `the shape, type and offset of tensor ${name}`);
  const shape: number[] = [];
  for (let d = 0; d < nDims; d++) shape.push(toSafeNumber(r.u64(), path, `dimension ${d} of tensor ${name}`));
  const typeId = r.u32();
  const type = ggmlTypeFromId(typeId);
  if (type === undefined) {
    throw new GgufError(`${path}: tensor ${name} has ggml type ${typeId}, which this reader does not know (a newer llama.cpp quantization?)`);
  }
  const offset = toSafeNumber(r.u64(), path, `data offset of tensor ${name}`);
  const { blockSize, blockBytes } = GGML_TYPES[type];
  if ((shape[0] ?? 1) % blockSize !== 0) {
    throw new GgufError(`${path}: tensor ${name} has rows of ${shape[0]} elements, not a multiple of the ${type} block size ${blockSize}`);
  }
  const elementCount = shape.reduce((a, b) => a * b, 1);
  if (!Number.isSafeInteger(elementCount)) throw new GgufError(`${path}: tensor ${name} has too many elements (${shape.join(" x ")})`);
  return { name, shape, type, offset, byteSize: (elementCount / blockSize) * blockBytes, elementCount };
}
