import { randomUUID } from "node:crypto";
import type { AskEvent, AskEventStage } from "@attr-rag/contracts";

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

/** Runs `work` and returns its result with its wall-clock milliseconds. */
export async function timed<T>(work: () => Promise<T> | T): Promise<[T, number]> {
  const t0 = performance.now();
  const value = await work();
  return [value, performance.now() - t0];
}
