/** Base class of the engine's errors: `name` says which kind, the message says what to do. */
export class EngineError extends Error {
  override name = "EngineError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** The model file is missing, unreadable, not GGUF, or llama.cpp could not load it. */
export class ModelLoadError extends EngineError {
  override name = "ModelLoadError";
}

/**
 * The GPU backend asked for (ATTR_RAG_GPU / --gpu cuda|vulkan) cannot be used here: its npm package is
 * missing or of another release, its library cannot load (no driver), or it finds no device.
 */
export class GpuBackendError extends EngineError {
  override name = "GpuBackendError";
}

/** A request exceeds what the model or context can hold (prompt length, KV cells, batch, sequences). */
export class EngineLimitError extends EngineError {
  override name = "EngineLimitError";
}

/** An argument is malformed (empty set, bad token, unknown strategy, ...). */
export class EngineArgumentError extends EngineError {
  override name = "EngineArgumentError";
}

/** The model or context was used after dispose(). */
export class DisposedError extends EngineError {
  override name = "DisposedError";
}

/** The caller's AbortSignal fired; the native work has stopped and its KV cells are free. */
export class AbortError extends EngineError {
  override name = "AbortError";
  constructor(message = "the operation was aborted", options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** Maps a rejection from the native addon to the engine's error classes. */
export function fromNative(err: unknown, what: string): EngineError {
  const e = err as { message?: string; code?: string };
  const message = e?.message ?? String(err);
  if (e?.code === "ABORT_ERR" || message === "cancelled") return new AbortError(`${what} was aborted`, { cause: err });
  if (/KV cache|context/i.test(message) && /full|cannot hold|larger contextSize/i.test(message)) {
    return new EngineLimitError(`${what}: ${message}`, { cause: err });
  }
  if (err instanceof RangeError) return new EngineArgumentError(`${what}: ${message}`, { cause: err });
  return new EngineError(`${what} failed: ${message}`, { cause: err });
}

/**
 * A model download failed. `retryable`: the partial file was kept and running the same pull again resumes
 * it (network errors, interrupted transfers, server errors); otherwise nothing was left behind.
 */
export class ModelPullError extends EngineError {
  override name = "ModelPullError";
  constructor(
    message: string,
    readonly retryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
