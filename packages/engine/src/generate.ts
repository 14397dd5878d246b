import type { ContextHandle } from "./contextHandle.js";
import { EngineArgumentError, EngineLimitError } from "./errors.js";
import type { NativeContext } from "./native/addonTypes.js";
import { decodeAnswer, type GeneratedSequence } from "./sequenceText.js";
import { TextDeltas } from "./textDeltas.js";

export interface GenerateOptions {
  /** Default 512. */
  maxTokens?: number;
  stop?: readonly string[];
  signal?: AbortSignal;
}

export interface GeneratedPiece {
  token: number;
  /**
   * Text this token adds. The pieces add up to the result's text (before stop strings are cut): a token that
   * ends inside a multi-byte character adds "" and the character arrives with the token that completes it.
   */
  text: string;
}

export type GenerationResult = GeneratedSequence;

type RunJob = <T>(signal: AbortSignal | undefined, job: (native: NativeContext) => Promise<T>) => Promise<T>;

/**
 * Streams greedy tokens of one prompt. Leaving the loop early (break/return/throw) cancels the native job,
 * so no work keeps running behind a consumer that has gone.
 */
export async function* generateTokens(
  context: ContextHandle,
  prompt: string | Int32Array,
  options: GenerateOptions,
  run: RunJob,
): AsyncGenerator<GeneratedPiece, GenerationResult> {
  const model = context.model;
  const tokens = typeof prompt === "string" ? model.tokenize(prompt, { addSpecial: true, parseSpecial: true }) : prompt;
  if (tokens.length === 0) throw new EngineArgumentError("generate: the prompt is empty");
  model.checkTokens(tokens, "generate prompt");
  const maxTokens = options.maxTokens ?? 512;
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new EngineArgumentError(`maxTokens must be an integer ≥ 1, got ${maxTokens}`);
  if (tokens.length + maxTokens + 1 > context.info.sequenceCells) {
    throw new EngineLimitError(
      `the prompt has ${tokens.length} tokens; with ${maxTokens} new tokens it needs ${tokens.length + maxTokens + 1} KV cells but a sequence can use ${context.info.sequenceCells}`,
    );
  }
  const stops = [...(options.stop ?? [])];
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort();
  options.signal?.addEventListener("abort", onOuterAbort, { once: true });
  if (options.signal?.aborted) controller.abort();

  const queue: number[] = [];
  let wake: (() => void) | undefined;
  let settled = false;
  const job = run(controller.signal, (native) =>
    native.occlude(
      { prefix: tokens, blocks: [], suffix: new Int32Array(0), occlude: new Int32Array(0), maxTokens, stops, strategy: 2, draftInitial: 1, draftMax: 1, maxParallel: 0 },
      (kind, _index, token) => {
        if (kind !== 0 || settled) return;
        queue.push(token);
        wake?.();
      },
    ),
  ).finally(() => {
    settled = true;
    wake?.();
  });
  job.catch(() => undefined); // observed below; avoid an unhandled rejection if the consumer leaves early

  const deltas = new TextDeltas(model);
  const piece = (token: number): GeneratedPiece => ({ token, text: deltas.push(token) });
  let yielded = 0;
  try {
    while (!settled || queue.length > 0) {
      if (queue.length === 0) {
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
        continue;
      }
      const token = queue.shift()!;
      yielded++;
      yield piece(token);
    }
    const raw = await job;
    // Progress events can trail the result; whatever was not streamed yet comes from the result itself.
    for (let i = yielded; i < raw.full.tokens.length; i++) {
      const token = raw.full.tokens[i]!;
      yield piece(token);
    }
    return decodeAnswer(model, raw.full, stops);
  } finally {
    options.signal?.removeEventListener("abort", onOuterAbort);
    if (!settled) {
      controller.abort();
      await job.catch(() => undefined);
    }
  }
}
