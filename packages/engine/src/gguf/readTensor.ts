// Reads one tensor's data by the offsets readGgufHeader found: for inspecting weights (tests, debugging),
// not for inference, which llama.cpp does from its own mmap.
import { GgufError } from "./ggufError.js";
import { PositionalReader } from "./positionalReader.js";
import { decodeValues, isEncodable } from "./tensorEncoding.js";
import type { GgufTensorInfo } from "./types.js";

/** The tensor's bytes as stored (ggml layout of its type, no padding). */
export async function readTensorBytes(path: string, tensor: GgufTensorInfo): Promise<Uint8Array> {
  const r = await PositionalReader.open(path);
  try {
    return await r.readAt(tensor.fileOffset, tensor.byteSize);
  } finally {
    await r.close();
  }
}

/** The tensor's values as floats, for F32, F16 and Q8_0 tensors (dequantized as ggml does). */
export async function readTensorValues(path: string, tensor: GgufTensorInfo): Promise<Float32Array> {
  if (!isEncodable(tensor.type)) {
    throw new GgufError(`${path}: tensor ${tensor.name} is ${tensor.type}; only F32, F16 and Q8_0 can be decoded here (use readTensorBytes)`);
  }
  return decodeValues(tensor.type, await readTensorBytes(path, tensor));
}
