// Turns float values into a tensor type's on-disk bytes and back: the writer encodes F32, F16 and Q8_0
// (what our synthetic models use); anything else must arrive already encoded.
import { endianness } from "node:os";
import { decodeFloat16, encodeFloat16 } from "./float16.js";
import { dequantizeQ8_0, quantizeQ8_0 } from "./q8_0.js";
import { GGML_TYPES, type GgmlType } from "./types.js";

export type EncodableType = "F32" | "F16" | "Q8_0";
export const ENCODABLE_TYPES: readonly EncodableType[] = ["F32", "F16", "Q8_0"];

const LITTLE_ENDIAN_HOST = endianness() === "LE";

export function isEncodable(type: GgmlType): type is EncodableType {
  return (ENCODABLE_TYPES as readonly string[]).includes(type);
}

/** Bytes `count` values of `type` occupy (count must be a whole number of blocks). */
export function byteSizeOf(type: GgmlType, count: number): number {
  const { blockSize, blockBytes } = GGML_TYPES[type];
  return (count / blockSize) * blockBytes;
}

/** The on-disk bytes of `values` as `type`. The caller checks that `values` is a whole number of blocks. */
export function encodeValues(type: EncodableType, values: Float32Array): Uint8Array {
  const out = new Uint8Array(byteSizeOf(type, values.length));
  switch (type) {
    case "F32":
      if (LITTLE_ENDIAN_HOST) out.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
      else {
        const view = new DataView(out.buffer);
        values.forEach((v, i) => view.setFloat32(4 * i, v, true));
      }
      return out;
    case "F16":
      encodeFloat16(values, out);
      return out;
    case "Q8_0":
      quantizeQ8_0(values, out);
      return out;
  }
}

/** The values on-disk bytes of `type` stand for (F32, F16 and Q8_0 only). */
export function decodeValues(type: EncodableType, bytes: Uint8Array): Float32Array {
  switch (type) {
    case "F32": {
      const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      const out = new Float32Array(bytes.length / 4);
      for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(4 * i, true);
      return out;
    }
    case "F16":
      return decodeFloat16(bytes);
    case "Q8_0":
      return dequantizeQ8_0(bytes);
  }
}
