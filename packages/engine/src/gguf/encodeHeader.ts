// Serializes the part of a GGUF file before the tensor data: magic, version, counts, metadata and tensor
// infos, padded to the alignment. Values are checked against their declared GGUF type here, because a
// wrongly typed value (an int32 where llama.cpp reads uint32) is only noticed by the loader much later.
import { ByteSink } from "./byteSink.js";
import { GgufError } from "./ggufError.js";
import {
  alignUp,
  GGUF_MAGIC,
  GGUF_SCALAR_TYPES,
  GGUF_TYPE_ARRAY,
  GGUF_VERSION,
  GGML_TYPES,
  type GgmlType,
  type GgufArrayValue,
  type GgufScalarType,
  type GgufValue,
} from "./types.js";
import { checkNumber } from "./values.js";

/** A tensor's header entry once its place in the data section is known. */
export interface PlannedTensor {
  readonly name: string;
  readonly shape: readonly number[];
  readonly type: GgmlType;
  readonly offset: number;
  readonly byteSize: number;
}

export function encodeHeader(metadata: ReadonlyArray<readonly [string, GgufValue]>, tensors: readonly PlannedTensor[], alignment: number): Uint8Array {
  const sink = new ByteSink();
  sink.bytes(new TextEncoder().encode(GGUF_MAGIC));
  sink.u32(GGUF_VERSION);
  sink.u64(tensors.length);
  sink.u64(metadata.length);
  for (const [key, value] of metadata) {
    sink.string(key);
    writeValue(sink, key, value);
  }
  for (const t of tensors) {
    sink.string(t.name);
    sink.u32(t.shape.length);
    for (const d of t.shape) sink.u64(d);
    sink.u32(GGML_TYPES[t.type].id);
    sink.u64(t.offset);
  }
  // llama.cpp expects the data section at the next aligned offset only when there are tensors.
  if (tensors.length > 0) sink.zeros(alignUp(sink.length, alignment) - sink.length);
  return sink.view().slice();
}

function writeValue(sink: ByteSink, key: string, v: GgufValue): void {
  if (v.type === "array") {
    sink.u32(GGUF_TYPE_ARRAY);
    writeArray(sink, key, v);
    return;
  }
  const code = GGUF_SCALAR_TYPES[v.type];
  if (code === undefined) throw new GgufError(`metadata ${key}: unknown GGUF type ${JSON.stringify(v.type)}`);
  sink.u32(code);
  writeScalar(sink, key, v.type, v.value);
}

function writeScalar(sink: ByteSink, key: string, type: GgufScalarType, value: unknown): void {
  const what = `metadata ${key}`;
  switch (type) {
    case "string":
      if (typeof value !== "string") throw new GgufError(`${what}: expected a string, got ${typeof value}`);
      sink.string(value);
      return;
    case "bool":
      if (typeof value !== "boolean") throw new GgufError(`${what}: expected a boolean, got ${typeof value}`);
      sink.u8(value ? 1 : 0);
      return;
    case "uint64":
    case "int64": {
      if (typeof value !== "bigint") throw new GgufError(`${what}: ${type} values are bigints, got ${typeof value}`);
      const [lo, hi] = type === "uint64" ? [0n, 2n ** 64n - 1n] : [-(2n ** 63n), 2n ** 63n - 1n];
      if (value < lo || value > hi) throw new GgufError(`${what}: ${value} does not fit ${type}`);
      if (type === "uint64") sink.u64(value);
      else sink.i64(value);
      return;
    }
    default:
      try {
        checkNumber(type, value as number, what);
      } catch (err) {
        throw new GgufError((err as Error).message, { cause: err });
      }
      writeNumber(sink, type, value as number);
  }
}

function writeNumber(sink: ByteSink, type: Exclude<GgufScalarType, "string" | "bool" | "uint64" | "int64">, v: number): void {
  switch (type) {
    case "uint8":
      return sink.u8(v);
    case "int8":
      return sink.i8(v);
    case "uint16":
      return sink.u16(v);
    case "int16":
      return sink.i16(v);
    case "uint32":
      return sink.u32(v);
    case "int32":
      return sink.i32(v);
    case "float32":
      return sink.f32(v);
    case "float64":
      return sink.f64(v);
  }
}

const ARRAY_CLASSES: Partial<Record<GgufScalarType, { name: string; is(v: unknown): boolean }>> = {
  uint8: { name: "Uint8Array", is: (v) => v instanceof Uint8Array },
  int8: { name: "Int8Array", is: (v) => v instanceof Int8Array },
  uint16: { name: "Uint16Array", is: (v) => v instanceof Uint16Array },
  int16: { name: "Int16Array", is: (v) => v instanceof Int16Array },
  uint32: { name: "Uint32Array", is: (v) => v instanceof Uint32Array },
  int32: { name: "Int32Array", is: (v) => v instanceof Int32Array },
  float32: { name: "Float32Array", is: (v) => v instanceof Float32Array },
  float64: { name: "Float64Array", is: (v) => v instanceof Float64Array },
  uint64: { name: "BigUint64Array", is: (v) => v instanceof BigUint64Array },
  int64: { name: "BigInt64Array", is: (v) => v instanceof BigInt64Array },
  bool: { name: "boolean[]", is: (v) => Array.isArray(v) },
  string: { name: "string[]", is: (v) => Array.isArray(v) },
};

function writeArray(sink: ByteSink, key: string, v: GgufArrayValue): void {
  const itemType = v.itemType as GgufScalarType | "array";
  const cls = itemType === "array" ? undefined : ARRAY_CLASSES[itemType];
  if (cls === undefined) throw new GgufError(`metadata ${key}: arrays of ${itemType} are not supported (llama.cpp reads no nested arrays)`);
  if (!cls.is(v.value)) throw new GgufError(`metadata ${key}: an array of ${itemType} must hold a ${cls.name}`);
  sink.u32(GGUF_SCALAR_TYPES[itemType as GgufScalarType]);
  sink.u64(v.value.length);
  for (let i = 0; i < v.value.length; i++) writeScalar(sink, `${key}[${i}]`, itemType as GgufScalarType, v.value[i]);
}
