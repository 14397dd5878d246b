// Short constructors for typed metadata values, so callers write `ggufValue.uint32(64)` instead of spelling
// out the tagged object (and cannot pair a number type with a typed array of another type).
import type { GgufArrayValue, GgufBigIntType, GgufNumberType, GgufValue } from "./types.js";

const TYPED_ARRAY_CTORS = {
  uint8: Uint8Array,
  int8: Int8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  uint32: Uint32Array,
  int32: Int32Array,
  float32: Float32Array,
  float64: Float64Array,
} as const;

function numberArray<T extends GgufNumberType>(itemType: T, values: ArrayLike<number>): GgufArrayValue {
  // Copy through a plain array so out-of-range inputs are caught here rather than silently wrapped.
  const list = Array.from(values);
  list.forEach((v, i) => checkNumber(itemType, v, `array element ${i}`));
  return { type: "array", itemType, value: TYPED_ARRAY_CTORS[itemType].from(list) } as GgufArrayValue;
}

const INT_RANGES: Partial<Record<GgufNumberType, [number, number]>> = {
  uint8: [0, 0xff],
  int8: [-0x80, 0x7f],
  uint16: [0, 0xffff],
  int16: [-0x8000, 0x7fff],
  uint32: [0, 0xffffffff],
  int32: [-0x80000000, 0x7fffffff],
};

/** Throws a RangeError when `v` cannot be stored exactly as `type` (floats accept any number). */
export function checkNumber(type: GgufNumberType, v: number, what: string): void {
  const isFloat = type === "float32" || type === "float64";
  if (typeof v !== "number" || (Number.isNaN(v) && !isFloat)) {
    throw new RangeError(`${what}: ${String(v)} is not a number that fits GGUF ${type}`);
  }
  const range = INT_RANGES[type];
  if (range && (!Number.isInteger(v) || v < range[0] || v > range[1])) {
    throw new RangeError(`${what}: ${v} does not fit GGUF ${type} (an integer in [${range[0]}, ${range[1]}])`);
  }
}

function scalar(type: GgufNumberType) {
  return (value: number): GgufValue => {
    checkNumber(type, value, `GGUF ${type} value`);
    return { type, value };
  };
}

function bigScalar(type: GgufBigIntType) {
  return (value: bigint | number): GgufValue => ({ type, value: BigInt(value) });
}

export const ggufValue = {
  uint8: scalar("uint8"),
  int8: scalar("int8"),
  uint16: scalar("uint16"),
  int16: scalar("int16"),
  uint32: scalar("uint32"),
  int32: scalar("int32"),
  float32: scalar("float32"),
  float64: scalar("float64"),
  uint64: bigScalar("uint64"),
  int64: bigScalar("int64"),
  bool: (value: boolean): GgufValue => ({ type: "bool", value }),
  string: (value: string): GgufValue => ({ type: "string", value }),
  /** An array of strings, booleans, numbers (copied into the matching typed array) or bigints. */
  array(
    itemType: GgufNumberType | GgufBigIntType | "bool" | "string",
    values: ArrayLike<number> | ArrayLike<bigint> | readonly boolean[] | readonly string[],
  ): GgufArrayValue {
    switch (itemType) {
      case "string":
        return { type: "array", itemType, value: Array.from(values as readonly string[], String) };
      case "bool":
        return { type: "array", itemType, value: Array.from(values as readonly boolean[], Boolean) };
      case "uint64":
        return { type: "array", itemType, value: BigUint64Array.from(values as ArrayLike<bigint>, (v) => BigInt(v)) };
      case "int64":
        return { type: "array", itemType, value: BigInt64Array.from(values as ArrayLike<bigint>, (v) => BigInt(v)) };
      default:
        return numberArray(itemType, values as ArrayLike<number>);
    }
  },
};
