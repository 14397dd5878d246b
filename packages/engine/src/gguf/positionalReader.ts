// Reads a file front to back through a window refilled by positional reads, so a header can be parsed out of
// a multi-GB model while only the window (1 MiB, or the largest single field) is in memory. Fixed-size
// fields are read synchronously from the window after one `ensure`, which keeps parsing 150k-entry string
// arrays from turning into 150k awaited promises.
import { open, type FileHandle } from "node:fs/promises";
import { GgufError } from "./ggufError.js";

const WINDOW_BYTES = 1 << 20;

export class PositionalReader {
  readonly #file: FileHandle;
  readonly #path: string;
  readonly fileSize: number;
  #window = new Uint8Array(WINDOW_BYTES);
  #view = new DataView(this.#window.buffer);
  /** File offset of #window[0]. */
  #windowStart = 0;
  #windowLength = 0;
  /** Read position inside the window. */
  #cursor = 0;
  readonly #decoder = new TextDecoder("utf-8", { fatal: true });

  private constructor(file: FileHandle, path: string, fileSize: number) {
    this.#file = file;
    this.#path = path;
    this.fileSize = fileSize;
  }

  static async open(path: string): Promise<PositionalReader> {
    let file: FileHandle;
    try {
      file = await open(path, "r");
    } catch (err) {
      throw new GgufError(`cannot open GGUF file ${path}: ${(err as Error).message}`, { cause: err });
    }
    try {
      const { size } = await file.stat();
      return new PositionalReader(file, path, size);
    } catch (err) {
      await file.close();
      throw new GgufError(`cannot stat GGUF file ${path}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Absolute file offset of the next byte to be read. */
  get position(): number {
    return this.#windowStart + this.#cursor;
  }

  get remaining(): number {
    return this.fileSize - this.position;
  }

  /** Whether the next `n` bytes can be read synchronously now (no `ensure` needed). */
  has(n: number): boolean {
    return this.#windowLength - this.#cursor >= n;
  }

  /** Makes the next `n` bytes readable synchronously; `what` names the field for the truncation error. */
  async ensure(n: number, what: string): Promise<void> {
    if (this.#windowLength - this.#cursor >= n) return;
    if (n > this.remaining) {
      throw new GgufError(
        `${this.#path} is truncated: ${what} needs ${n} bytes at offset ${this.position} but the file has ${this.fileSize} bytes; ` +
          "the file is incomplete or not a GGUF file (download or generate it again)",
      );
    }
    const start = this.position;
    if (n > this.#window.length) {
      this.#window = new Uint8Array(n);
      this.#view = new DataView(this.#window.buffer);
    }
    const want = Math.min(this.#window.length, this.fileSize - start);
    let got = 0;
    while (got < want) {
      const { bytesRead } = await this.#file.read(this.#window, got, want - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    this.#windowStart = start;
    this.#windowLength = got;
    this.#cursor = 0;
    if (got < n) throw new GgufError(`${this.#path} shrank while being read (wanted ${n} bytes at offset ${start}, got ${got})`);
  }

  u8(): number {
    return this.#window[this.#cursor++]!;
  }
  i8(): number {
    return this.#view.getInt8(this.#cursor++);
  }
  u16(): number {
    const v = this.#view.getUint16(this.#cursor, true);
    this.#cursor += 2;
    return v;
  }
  i16(): number {
    const v = this.#view.getInt16(this.#cursor, true);
    this.#cursor += 2;
    return v;
  }
  u32(): number {
    const v = this.#view.getUint32(this.#cursor, true);
    this.#cursor += 4;
    return v;
  }
  i32(): number {
    const v = this.#view.getInt32(this.#cursor, true);
    this.#cursor += 4;
    return v;
  }
  f32(): number {
    const v = this.#view.getFloat32(this.#cursor, true);
    this.#cursor += 4;
    return v;
  }
  f64(): number {
    const v = this.#view.getFloat64(this.#cursor, true);
    this.#cursor += 8;
    return v;
  }
  u64(): bigint {
    const v = this.#view.getBigUint64(this.#cursor, true);
    this.#cursor += 8;
    return v;
  }
  i64(): bigint {
    const v = this.#view.getBigInt64(this.#cursor, true);
    this.#cursor += 8;
    return v;
  }

  /** A copy of the next `n` bytes (already ensured). */
  bytes(n: number): Uint8Array {
    const out = this.#window.slice(this.#cursor, this.#cursor + n);
    this.#cursor += n;
    return out;
  }

  /** The next `n` bytes (already ensured) decoded as UTF-8; invalid UTF-8 is an error naming `what`. */
  utf8(n: number, what: string): string {
    const start = this.#cursor;
    this.#cursor += n;
    try {
      return this.#decoder.decode(this.#window.subarray(start, start + n));
    } catch (err) {
      throw new GgufError(`${this.#path}: ${what} at offset ${this.#windowStart + start} is not valid UTF-8`, { cause: err });
    }
  }

  /** Reads `length` bytes at an absolute `position` without moving the cursor (for tensor data). */
  async readAt(position: number, length: number): Promise<Uint8Array> {
    if (position + length > this.fileSize) {
      throw new GgufError(`${this.#path} is truncated: ${length} bytes at offset ${position} run past its end (${this.fileSize} bytes)`);
    }
    const out = new Uint8Array(length);
    let got = 0;
    while (got < length) {
      const { bytesRead } = await this.#file.read(out, got, length - got, position + got);
      if (bytesRead === 0) throw new GgufError(`${this.#path} shrank while being read (offset ${position + got})`);
      got += bytesRead;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.#file.close();
  }
}
