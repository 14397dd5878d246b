import { randomUUID } from "node:crypto";
import type { AskEvent, AskEventStage } from "@attr-rag/contracts";
import { inSpan } from "@attr-rag/telemetry";

/** Receives every event of one Ask, in order. */
export type AskEventListener = (event: AskEvent) => void;

/** Numbers and timestamps the events of one request; every stage goes out through `emit`. */
export class EventSink {
  readonly requestId: string;
  #sequence = 0;

  constructor(
    readonly listener: AskEventListener,
    requestId?: string,
    readonly startedAt: number = performance.now(),
  ) {
    this.requestId = requestId ?? randomUUID();
  }

  elapsedMs(): number {
    return performance.now() - this.startedAt;
  }

  emit(stage: AskEventStage): void {
    this.listener({ requestId: this.requestId, sequence: this.#sequence++, elapsedMs: this.elapsedMs(), stage });
  }
}

/**
 * Runs `work` and returns its result with its wall-clock milliseconds; with a `stage` name, inside a span
 * `stage.<name>` (a child of the Ask's span), so a trace shows the pipeline's stages in order.
 */
export async function timed<T>(work: () => Promise<T> | T, stage?: string): Promise<[T, number]> {
  const t0 = performance.now();
  const value = stage === undefined ? await work() : await inSpan(`stage.${stage}`, {}, async () => work());
  return [value, performance.now() - t0];
}
