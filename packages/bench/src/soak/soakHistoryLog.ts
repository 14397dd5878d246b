// The history as the soak run writes it: each operation invoked, then ended with its status; time is ms since
// the run started. What checkHistory (in core) reads, plus the observations taken at the end.
import type { Operation, OperationKind } from "@attr-rag/core";

export class SoakHistoryLog {
  readonly operations: Operation[] = [];
  readonly #start = performance.now();

  now(): number {
    return Math.round(performance.now() - this.#start);
  }

  invoke(kind: OperationKind, args: Record<string, unknown>): Operation {
    const op: Operation = { id: this.operations.length + 1, kind, invokedAtMs: this.now(), args };
    this.operations.push(op);
    return op;
  }

  end(op: Operation, code: string, detail?: string, result?: Record<string, unknown>): void {
    op.endedAtMs = this.now();
    op.code = code;
    if (detail !== undefined) op.detail = detail.slice(0, 300);
    if (result !== undefined) op.result = result;
  }

  /** Runs `work`, ending `op` with OK and what it returned, or with the gRPC status name of what it threw. */
  async run<T extends Record<string, unknown> | void>(op: Operation, work: () => Promise<T>): Promise<T | undefined> {
    try {
      const result = await work();
      this.end(op, "OK", undefined, result === undefined ? undefined : result);
      return result;
    } catch (err) {
      this.end(op, codeName(err), (err as Error).message);
      return undefined;
    }
  }
}

const NAMES = ["OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"];

/** The gRPC status name of an error from a call (its numeric `code`), "HTTP <n>" for a download, else "ERROR". */
export function codeName(err: unknown): string {
  const e = err as { code?: unknown; httpStatus?: number };
  if (typeof e.httpStatus === "number") return `HTTP ${e.httpStatus}`;
  return typeof e.code === "number" ? (NAMES[e.code] ?? `CODE ${e.code}`) : "ERROR";
}
