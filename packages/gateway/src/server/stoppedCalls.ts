import { status } from "@grpc/grpc-js";
import type { ServiceLog } from "@attr-rag/index";

/** How a running call whose signal aborted (client gone, deadline passed, server closing) ended. */
export interface StoppedCall {
  readonly rpc: string;
  /** The abort's status code (CANCELLED, DEADLINE_EXCEEDED, …). */
  readonly code: number;
  /** From the abort until the call's work returned: how long its engine jobs kept running. */
  readonly stopMs: number;
  /** True when the work stopped early (threw); false when it ran to its end anyway, i.e. the abort was ignored. */
  readonly stopped: boolean;
}

/**
 * The server's own account of aborted calls, so "cancel frees the engine" can be checked from the server's
 * side (a client that drops a stream cannot see what happened after it left) and an operator sees each in
 * the log. Only counts and the latest few are kept.
 */
export class StoppedCalls {
  readonly #recent: StoppedCall[] = [];
  #count = 0;
  #ranToEnd = 0;

  constructor(private readonly log: ServiceLog) {}

  /** Aborted calls so far. */
  get count(): number {
    return this.#count;
  }

  /** Of those, calls whose work ran to its end although aborted (a cancel that did not reach the engine). */
  get ranToEnd(): number {
    return this.#ranToEnd;
  }

  /** The latest aborted calls, oldest first (up to 32). */
  recent(): readonly StoppedCall[] {
    return [...this.#recent];
  }

  record(call: StoppedCall): void {
    this.#count++;
    if (!call.stopped) this.#ranToEnd++;
    this.#recent.push(call);
    if (this.#recent.length > 32) this.#recent.shift();
    const why = status[call.code] ?? String(call.code);
    this.log(
      call.stopped
        ? `${call.rpc}: ${why}; its work stopped ${Math.round(call.stopMs)} ms later`
        : `${call.rpc}: ${why}, but its work ran to its end (${Math.round(call.stopMs)} ms later): the abort did not reach it`,
    );
  }
}
