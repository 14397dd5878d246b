/** A GGUF file could not be read or written; the message names the file, the place and what to do. */
export class GgufError extends Error {
  override readonly name = "GgufError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
