// A growable little-endian byte buffer for building a GGUF header in memory (headers are at most a few MB,
// mostly tokenizer strings; tensor data never goes through here).

const encoder = new TextEncoder();

export class ByteSink {
  #bytes = new Uint8Array(1 << 16);
  #view = new DataView(this.#bytes.buffer);
  #length = 0;

  get length(): number {
    return this.#length;
  }

  #reserve(n: number): number {
    const at = this.#length;
    if (at + n > this.#bytes.length) {
      let size = this.#bytes.length * 2;
      while (size < at + n) size *= 2;
      const grown = new Uint8Array(size);
      grown.set(this.#bytes.subarray(0, at));
      this.#bytes = grown;
      this.#view = new DataView(grown.buffer);
    }
    this.#length += n;
    return at;
  }

  // Each setter reserves before touching #bytes/#view: growing replaces them, and `this.#view.set(this.#reserve())`
  // would evaluate the old view first.
  u8(v: number): void {
    const at = this.#reserve(1);
    this.#bytes[at] = v;
  }
  i8(v: number): void {
    const at = this.#reserve(1);
    this.#view.setInt8(at, v);
  }
  u16(v: number): void {
    const at = this.#reserve(2);
    this.#view.setUint16(at, v, true);
  }
  i16(v: number): void {
    const at = this.#reserve(2);
    this.#view.setInt16(at, v, true);
  }
  u32(v: number): void {
    const at = this.#reserve(4);
    this.#view.setUint32(at, v, true);
  }
  i32(v: number): void {
    const at = this.#reserve(4);
    this.#view.setInt32(at, v, true);
  }
  f32(v: number): void {
    const at = this.#reserve(4);
    this.#view.setFloat32(at, v, true);
  }
  f64(v: number): void {
    const at = this.#reserve(8);
    this.#view.setFloat64(at, v, true);
  }
  u64(v: bigint | number): void {
    const at = this.#reserve(8);
    this.#view.setBigUint64(at, BigInt(v), true);
  }
  i64(v: bigint | number): void {
    const at = this.#reserve(8);
    this.#view.setBigInt64(at, BigInt(v), true);
  }
  bytes(b: Uint8Array): void {
    const at = this.#reserve(b.length);
    this.#bytes.set(b, at);
  }
  /** A GGUF string: uint64 byte length, then UTF-8 without a terminating NUL. */
  string(s: string): void {
    const b = encoder.encode(s);
    this.u64(b.length);
    this.bytes(b);
  }
  zeros(n: number): void {
    const at = this.#reserve(n);
    this.#bytes.fill(0, at, this.#length);
  }

  /** The bytes written so far (a view; do not keep it across further writes). */
  view(): Uint8Array {
    return this.#bytes.subarray(0, this.#length);
  }
}
