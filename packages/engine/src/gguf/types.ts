// The GGUF (v3) vocabulary shared by the reader and the writer: metadata value types, ggml tensor types and
// the shapes of what a header holds. Numeric codes are the on-disk ones (ggml/include/gguf.h `gguf_type`,
// ggml/include/ggml.h `ggml_type`); everything above this file speaks in names.

export const GGUF_MAGIC = "GGUF";
export const GGUF_VERSION = 3;
/** Used when a file has no `general.alignment` key (gguf.h GGUF_DEFAULT_ALIGNMENT). */
export const GGUF_DEFAULT_ALIGNMENT = 32;
export const GGUF_ALIGNMENT_KEY = "general.alignment";
/** ggml's GGML_MAX_NAME is 64 including the terminating NUL, so names may have at most 63 bytes. */
export const GGUF_MAX_TENSOR_NAME_BYTES = 63;
export const GGUF_MAX_DIMS = 4;

/** `offset` rounded up to a multiple of `alignment` (where tensor data and the data section may start). */
export function alignUp(offset: number, alignment: number): number {
  return Math.ceil(offset / alignment) * alignment;
}

/** Scalar metadata value types, by on-disk code. `array` (9) is not a scalar and is handled apart. */
export const GGUF_SCALAR_TYPES = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;
export const GGUF_TYPE_ARRAY = 9;

export type GgufScalarType = keyof typeof GGUF_SCALAR_TYPES;
export type GgufNumberType = "uint8" | "int8" | "uint16" | "int16" | "uint32" | "int32" | "float32" | "float64";
export type GgufBigIntType = "uint64" | "int64";

/** Byte width of fixed-size scalars (strings are length-prefixed and have none). */
export const GGUF_SCALAR_SIZE: Readonly<Record<Exclude<GgufScalarType, "string">, number>> = {
  uint8: 1,
  int8: 1,
  uint16: 2,
  int16: 2,
  uint32: 4,
  int32: 4,
  float32: 4,
  bool: 1,
  uint64: 8,
  int64: 8,
  float64: 8,
};

const SCALAR_BY_CODE = new Map<number, GgufScalarType>(
  Object.entries(GGUF_SCALAR_TYPES).map(([name, code]) => [code, name as GgufScalarType]),
);

export function scalarTypeFromCode(code: number): GgufScalarType | undefined {
  return SCALAR_BY_CODE.get(code);
}

/** The typed array each numeric array type is held in, so large arrays (token types, scores) stay compact. */
export interface GgufTypedArrays {
  uint8: Uint8Array;
  int8: Int8Array;
  uint16: Uint16Array;
  int16: Int16Array;
  uint32: Uint32Array;
  int32: Int32Array;
  float32: Float32Array;
  float64: Float64Array;
  uint64: BigUint64Array;
  int64: BigInt64Array;
}

type ArrayOf<T extends GgufScalarType, V> = { readonly type: "array"; readonly itemType: T; readonly value: V };

/**
 * A metadata array. Nested arrays are allowed by the spec but rejected by llama.cpp's reader, so neither
 * our reader nor our writer accepts them.
 */
export type GgufArrayValue =
  | { [K in keyof GgufTypedArrays]: ArrayOf<K, GgufTypedArrays[K]> }[keyof GgufTypedArrays]
  | ArrayOf<"bool", readonly boolean[]>
  | ArrayOf<"string", readonly string[]>;

/** One metadata value with its GGUF type kept, so a value read from one file can be written unchanged. */
export type GgufValue =
  | { readonly type: GgufNumberType; readonly value: number }
  | { readonly type: GgufBigIntType; readonly value: bigint }
  | { readonly type: "bool"; readonly value: boolean }
  | { readonly type: "string"; readonly value: string }
  | GgufArrayValue;

/** Block size (elements) and block byte size of a ggml tensor type. */
export interface GgmlTypeTraits {
  readonly id: number;
  readonly blockSize: number;
  readonly blockBytes: number;
}

/**
 * Every ggml type a GGUF file may hold (gguf-py GGML_QUANT_SIZES). The reader needs all of them to size
 * tensors of real models; the writer encodes only F32, F16 and Q8_0 and accepts pre-encoded bytes for the rest.
 */
export const GGML_TYPES = {
  F32: { id: 0, blockSize: 1, blockBytes: 4 },
  F16: { id: 1, blockSize: 1, blockBytes: 2 },
  Q4_0: { id: 2, blockSize: 32, blockBytes: 18 },
  Q4_1: { id: 3, blockSize: 32, blockBytes: 20 },
  Q5_0: { id: 6, blockSize: 32, blockBytes: 22 },
  Q5_1: { id: 7, blockSize: 32, blockBytes: 24 },
  Q8_0: { id: 8, blockSize: 32, blockBytes: 34 },
  Q8_1: { id: 9, blockSize: 32, blockBytes: 36 },
  Q2_K: { id: 10, blockSize: 256, blockBytes: 84 },
  Q3_K: { id: 11, blockSize: 256, blockBytes: 110 },
  Q4_K: { id: 12, blockSize: 256, blockBytes: 144 },
  Q5_K: { id: 13, blockSize: 256, blockBytes: 176 },
  Q6_K: { id: 14, blockSize: 256, blockBytes: 210 },
  Q8_K: { id: 15, blockSize: 256, blockBytes: 292 },
  IQ2_XXS: { id: 16, blockSize: 256, blockBytes: 66 },
  IQ2_XS: { id: 17, blockSize: 256, blockBytes: 74 },
  IQ3_XXS: { id: 18, blockSize: 256, blockBytes: 98 },
  IQ1_S: { id: 19, blockSize: 256, blockBytes: 50 },
  IQ4_NL: { id: 20, blockSize: 32, blockBytes: 18 },
  IQ3_S: { id: 21, blockSize: 256, blockBytes: 110 },
  IQ2_S: { id: 22, blockSize: 256, blockBytes: 82 },
  IQ4_XS: { id: 23, blockSize: 256, blockBytes: 136 },
  I8: { id: 24, blockSize: 1, blockBytes: 1 },
  I16: { id: 25, blockSize: 1, blockBytes: 2 },
  I32: { id: 26, blockSize: 1, blockBytes: 4 },
  I64: { id: 27, blockSize: 1, blockBytes: 8 },
  F64: { id: 28, blockSize: 1, blockBytes: 8 },
  IQ1_M: { id: 29, blockSize: 256, blockBytes: 56 },
  BF16: { id: 30, blockSize: 1, blockBytes: 2 },
  TQ1_0: { id: 34, blockSize: 256, blockBytes: 54 },
  TQ2_0: { id: 35, blockSize: 256, blockBytes: 66 },
  MXFP4: { id: 39, blockSize: 32, blockBytes: 17 },
  NVFP4: { id: 40, blockSize: 64, blockBytes: 36 },
  Q1_0: { id: 41, blockSize: 128, blockBytes: 18 },
  Q2_0: { id: 42, blockSize: 64, blockBytes: 18 },
} as const satisfies Record<string, GgmlTypeTraits>;

export type GgmlType = keyof typeof GGML_TYPES;

const GGML_BY_ID = new Map<number, GgmlType>(Object.entries(GGML_TYPES).map(([name, t]) => [t.id, name as GgmlType]));

export function ggmlTypeFromId(id: number): GgmlType | undefined {
  return GGML_BY_ID.get(id);
}

/** A tensor's entry in the header. `shape` is in ggml order: shape[0] (ne[0]) is the fastest-varying dimension. */
export interface GgufTensorInfo {
  readonly name: string;
  readonly shape: readonly number[];
  readonly type: GgmlType;
  /** Offset of the data relative to the start of the data section, as stored in the file. */
  readonly offset: number;
  /** Offset of the data from the start of the file (dataOffset + offset). */
  readonly fileOffset: number;
  /** Bytes of tensor data, without the alignment padding that follows it. */
  readonly byteSize: number;
  readonly elementCount: number;
}

export interface GgufHeader {
  readonly version: number;
  /** Metadata in file order; values keep their GGUF types. */
  readonly metadata: ReadonlyMap<string, GgufValue>;
  readonly tensors: readonly GgufTensorInfo[];
  readonly alignment: number;
  /** File offset of the tensor data section (aligned when the file has tensors, as llama.cpp requires). */
  readonly dataOffset: number;
  readonly fileSize: number;
}
