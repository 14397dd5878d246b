// Sequential file output through one reusable buffer: many small tensors (norms, biases) become a few large
// writes, and large chunks go straight to the file without a copy.
import type { FileHandle } from "node:fs/promises";

const BUFFER_BYTES = 8 << 20;

export class FileSink {
  readonly #file: FileHandle;
  readonly #buffer = new Uint8Array(BUFFER_BYTES);
  #buffered = 0;
  #written = 0;

  constructor(file: FileHandle) {
    this.#file = file;
  }

  /** Bytes accepted so far (written or buffered). */
  get position(): number {
    return this.#written + this.#buffered;
  }

  async write(bytes: Uint8Array): Promise<void> {
    if (this.#buffered + bytes.length > this.#buffer.length) await this.flush();
    if (bytes.length >= this.#buffer.length) {
      await this.#writeAll(bytes);
      return;
    }
    this.#buffer.set(bytes, this.#buffered);
    this.#buffered += bytes.length;
  }

  async zeros(n: number): Promise<void> {
    if (n > 0) await this.write(new Uint8Array(n));
  }

  async flush(): Promise<void> {
    if (this.#buffered === 0) return;
    await this.#writeAll(this.#buffer.subarray(0, this.#buffered));
    this.#buffered = 0;
  }

  async #writeAll(bytes: Uint8Array): Promise<void> {
    let done = 0;
    while (done < bytes.length) {
      const { bytesWritten } = await this.#file.write(bytes, done, bytes.length - done, this.#written);
      done += bytesWritten;
      this.#written += bytesWritten;
    }
  }
}
