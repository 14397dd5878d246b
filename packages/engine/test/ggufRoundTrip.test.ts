import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { float16BitsToFloat32, float32ToFloat16Bits } from "../src/gguf/float16.js";
import { GgufError } from "../src/gguf/ggufError.js";
import { dequantizeQ8_0, quantizeQ8_0 } from "../src/gguf/q8_0.js";
import { readGgufHeader } from "../src/gguf/readHeader.js";
import { readTensorBytes, readTensorValues } from "../src/gguf/readTensor.js";
import { alignUp, type GgufValue } from "../src/gguf/types.js";
import { ggufValue } from "../src/gguf/values.js";
import { writeGguf, type GgufTensorInput } from "../src/gguf/writeGguf.js";

const dir = mkdtempSync(join(tmpdir(), "gguf-roundtrip-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const EVERY_TYPE: [string, GgufValue][] = [
  ["general.architecture", ggufValue.string("test")],
  ["t.uint8", ggufValue.uint8(250)],
  ["t.int8", ggufValue.int8(-128)],
  ["t.uint16", ggufValue.uint16(65535)],
  ["t.int16", ggufValue.int16(-32768)],
  ["t.uint32", ggufValue.uint32(4294967295)],
  ["t.int32", ggufValue.int32(-2147483648)],
  ["t.float32", ggufValue.float32(1.5)],
  ["t.float64", ggufValue.float64(0.1)],
  ["t.bool_true", ggufValue.bool(true)],
  ["t.bool_false", ggufValue.bool(false)],
  ["t.string", ggufValue.string("héllo ✓ \n\0 end")],
  ["t.empty_string", ggufValue.string("")],
  ["t.uint64", ggufValue.uint64(2n ** 64n - 1n)],
  ["t.int64", ggufValue.int64(-(2n ** 63n))],
  ["t.arr.string", ggufValue.array("string", ["a", "", "Ġ Ġ", "日本"])],
  ["t.arr.int32", ggufValue.array("int32", [1, -2, 2147483647])],
  ["t.arr.float32", ggufValue.array("float32", [0.25, -1e-6, 3])],
  ["t.arr.uint8", ggufValue.array("uint8", [0, 255, 7])],
  ["t.arr.int8", ggufValue.array("int8", [-128, 127])],
  ["t.arr.uint16", ggufValue.array("uint16", [65535])],
  ["t.arr.int16", ggufValue.array("int16", [-1])],
  ["t.arr.uint32", ggufValue.array("uint32", [4294967295, 0])],
  ["t.arr.float64", ggufValue.array("float64", [Math.PI])],
  ["t.arr.bool", ggufValue.array("bool", [true, false, true])],
  ["t.arr.uint64", ggufValue.array("uint64", [2n ** 64n - 1n])],
  ["t.arr.int64", ggufValue.array("int64", [-5n])],
  ["t.arr.empty", ggufValue.array("int32", [])],
];

const f32Values = new Float32Array([1, -2.5, 3.25]); // 12 bytes: padded to the alignment
const f16Values = new Float32Array(64 * 2).map((_, i) => (i - 64) / 7);
const q8Values = new Float32Array(32 * 3).map((_, i) => Math.cos(i) * 4);
const q4Bytes = new Uint8Array(18).map((_, i) => i * 13); // an opaque Q4_0 block, passed through as bytes

function tensors(): GgufTensorInput[] {
  return [
    { name: "a.f32", shape: [3], type: "F32", data: f32Values },
    // A generator yielding the tensor in two pieces, produced only when the writer gets there.
    {
      name: "b.f16",
      shape: [64, 2],
      type: "F16",
      data: function* () {
        yield f16Values.subarray(0, 64);
        yield f16Values.subarray(64);
      },
    },
    { name: "c.q8_0", shape: [32, 3], type: "Q8_0", data: async () => q8Values },
    { name: "d.q4_0", shape: [32], type: "Q4_0", data: () => q4Bytes },
  ];
}

describe("gguf write/read round trip", () => {
  it("gguf round trip - metadata of every type comes back with the same types and values, in order", async () => {
    const path = join(dir, "meta.gguf");
    await writeGguf(path, { metadata: EVERY_TYPE, tensors: [] });
    const header = await readGgufHeader(path);
    expect(header.version).toBe(3);
    expect(header.tensors).toEqual([]);
    const expected = new Map([...EVERY_TYPE, ["general.alignment", ggufValue.uint32(32)]]);
    expect([...header.metadata.keys()]).toEqual([...expected.keys()]);
    for (const [key, value] of expected) expect(header.metadata.get(key), key).toEqual(value);
    // No tensors: the file ends right after the metadata, with no alignment padding (as llama.cpp writes it).
    expect(header.dataOffset).toBe(header.fileSize);
  });

  it("gguf round trip - float32 metadata is stored as float32 (0.1 comes back as Math.fround(0.1))", async () => {
    const path = join(dir, "f32.gguf");
    await writeGguf(path, { metadata: { "t.x": ggufValue.float32(0.1) }, tensors: [] });
    expect((await readGgufHeader(path)).metadata.get("t.x")).toEqual({ type: "float32", value: Math.fround(0.1) });
  });

  it("gguf round trip - tensor infos, aligned offsets and data of F32, F16, Q8_0 and pre-encoded tensors", async () => {
    const path = join(dir, "tensors.gguf");
    const result = await writeGguf(path, { metadata: EVERY_TYPE, tensors: tensors() });
    const header = await readGgufHeader(path);
    expect(header.alignment).toBe(32);
    expect(header.dataOffset % 32).toBe(0);
    expect(header.dataOffset).toBe(result.dataOffset);
    expect(header.tensors.map((t) => [t.name, t.type, t.shape, t.byteSize])).toEqual([
      ["a.f32", "F32", [3], 12],
      ["b.f16", "F16", [64, 2], 256],
      ["c.q8_0", "Q8_0", [32, 3], 3 * 34],
      ["d.q4_0", "Q4_0", [32], 18],
    ]);
    // Back to back, each padded to the alignment: the only layout llama.cpp's loader accepts.
    let expectedOffset = 0;
    for (const t of header.tensors) {
      expect(t.offset, t.name).toBe(expectedOffset);
      expect(t.fileOffset % 32, t.name).toBe(0);
      expectedOffset += alignUp(t.byteSize, 32);
    }
    expect(header.fileSize).toBe(header.dataOffset + expectedOffset);
    expect(statSync(path).size).toBe(result.fileSize);

    const [a, b, c, d] = header.tensors;
    expect([...(await readTensorValues(path, a!))]).toEqual([...f32Values]);
    expect([...(await readTensorValues(path, b!))]).toEqual([...f16Values].map((v) => float16BitsToFloat32(float32ToFloat16Bits(v))));
    const q8 = new Uint8Array(3 * 34);
    quantizeQ8_0(q8Values, q8);
    expect([...(await readTensorBytes(path, c!))]).toEqual([...q8]);
    expect([...(await readTensorValues(path, c!))]).toEqual([...dequantizeQ8_0(q8)]);
    expect([...(await readTensorBytes(path, d!))]).toEqual([...q4Bytes]);
    // Padding bytes are zeros.
    const bytes = readFileSync(path);
    expect([...bytes.subarray(a!.fileOffset + 12, a!.fileOffset + 32)]).toEqual(new Array(20).fill(0));
  });

  it("gguf round trip - a custom general.alignment is written and every offset honours it", async () => {
    const path = join(dir, "align64.gguf");
    await writeGguf(path, { metadata: EVERY_TYPE, tensors: tensors(), alignment: 64 });
    const header = await readGgufHeader(path);
    expect(header.metadata.get("general.alignment")).toEqual({ type: "uint32", value: 64 });
    expect(header.alignment).toBe(64);
    expect(header.dataOffset % 64).toBe(0);
    for (const t of header.tensors) expect(t.offset % 64, t.name).toBe(0);
    expect(header.tensors[1]!.offset).toBe(64);
  });

  it("gguf round trip - reports progress up to the total byte count", async () => {
    const seen: number[] = [];
    let total = 0;
    const result = await writeGguf(join(dir, "progress.gguf"), {
      metadata: EVERY_TYPE,
      tensors: tensors(),
      onProgress: (p) => {
        seen.push(p.bytesWritten);
        total = p.totalBytes;
      },
    });
    expect(total).toBe(result.fileSize);
    expect(seen.at(-1)).toBe(result.fileSize);
    expect(seen).toEqual([...seen].sort((x, y) => x - y));
  });
});

describe("gguf writer errors", () => {
  const write = (name: string, options: Parameters<typeof writeGguf>[1]) => writeGguf(join(dir, name), options);

  it("gguf writer - a tensor whose data is shorter than its shape fails, leaving no file (not even a temporary one)", async () => {
    const before = readdirSync(dir);
    await expect(write("short.gguf", { metadata: {}, tensors: [{ name: "x", shape: [8], type: "F32", data: new Float32Array(7) }] })).rejects.toThrow(
      /tensor x: got 28 bytes of data, its shape \[8\] and type F32 take 32/,
    );
    expect(readdirSync(dir)).toEqual(before);
  });

  it("gguf writer - rejects values that do not fit their declared type, naming the key", async () => {
    await expect(write("bad.gguf", { metadata: { "k.neg": { type: "uint32", value: -1 } }, tensors: [] })).rejects.toThrow(/metadata k.neg: -1 does not fit GGUF uint32/);
    await expect(write("bad.gguf", { metadata: { "k.big": { type: "uint64", value: 1 as unknown as bigint } }, tensors: [] })).rejects.toThrow(/bigints/);
    await expect(
      write("bad.gguf", { metadata: { "k.arr": { type: "array", itemType: "int32", value: new Float32Array(1) as unknown as Int32Array } }, tensors: [] }),
    ).rejects.toThrow(/must hold a Int32Array/);
    expect(() => ggufValue.int8(200)).toThrow(RangeError);
  });

  it("gguf writer - rejects shapes llama.cpp would reject: Q8_0 rows not a multiple of 32, duplicate or long names", async () => {
    const q = (name: string, shape: number[]): GgufTensorInput => ({ name, shape, type: "Q8_0", data: new Float32Array(shape.reduce((a, b) => a * b, 1)) });
    await expect(write("e.gguf", { metadata: {}, tensors: [q("w", [48, 2])] })).rejects.toThrow(/shape\[0\] = 48 must be a multiple of 32/);
    await expect(write("e.gguf", { metadata: {}, tensors: [q("w", [32]), q("w", [32])] })).rejects.toThrow(/"w" appears twice/);
    await expect(write("e.gguf", { metadata: {}, tensors: [q("n".repeat(64), [32])] })).rejects.toThrow(/1 to 63 bytes/);
    await expect(
      write("e.gguf", { metadata: { "general.alignment": ggufValue.int32(32) }, tensors: [] }),
    ).rejects.toThrow(GgufError);
    await expect(write("e.gguf", { metadata: {}, tensors: [{ name: "k", shape: [32], type: "Q4_K" as const, data: new Float32Array(32) }] })).rejects.toThrow(
      /shape\[0\] = 32 must be a multiple of 256/,
    );
    await expect(write("e.gguf", { metadata: {}, tensors: [{ name: "k", shape: [32], type: "Q4_0", data: new Float32Array(32) }] })).rejects.toThrow(
      /encodes only F32, F16 and Q8_0/,
    );
  });

  it("gguf reader - a file that is not GGUF, or is cut short, fails with a message saying so", async () => {
    const notGguf = join(dir, "not.gguf");
    await writeGguf(join(dir, "whole.gguf"), { metadata: EVERY_TYPE, tensors: tensors() });
    const whole = readFileSync(join(dir, "whole.gguf"));
    writeFileSync(notGguf, "GGML not a gguf file at all, padding padding");
    await expect(readGgufHeader(notGguf)).rejects.toThrow(/is not a GGUF file/);
    writeFileSync(join(dir, "cut-counts.gguf"), whole.subarray(0, 200));
    await expect(readGgufHeader(join(dir, "cut-counts.gguf"))).rejects.toThrow(/29 metadata entries and 4 tensors, more than its 200 bytes can hold; the file is truncated or corrupt/);
    writeFileSync(join(dir, "cut-meta.gguf"), whole.subarray(0, 700));
    await expect(readGgufHeader(join(dir, "cut-meta.gguf"))).rejects.toThrow(/cut-meta.gguf is truncated: .* at offset \d+ but the file has 700 bytes/);
    writeFileSync(join(dir, "cut-data.gguf"), whole.subarray(0, whole.length - 40));
    await expect(readGgufHeader(join(dir, "cut-data.gguf"))).rejects.toThrow(/is truncated: tensor d.q4_0/);
    await expect(readGgufHeader(join(dir, "missing.gguf"))).rejects.toThrow(/cannot open GGUF file/);
  });
});
