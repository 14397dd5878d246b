import { AsyncLocalStorage } from "node:async_hooks";

/** What a log line says about the work it belongs to, where there is such work. */
export interface LogFields {
  readonly request_id?: string;
  readonly batch_id?: string;
  readonly item_index?: number;
  readonly job_id?: string;
}

const storage = new AsyncLocalStorage<LogFields>();

/**
 * Runs `fn` with `fields` added to every log line written inside it (and in what it awaits), on top of the
 * fields already in force: a batch item's lines name the batch, the item and the Ask's request id without
 * every function passing them along.
 */
export function withLogFields<T>(fields: LogFields, fn: () => T): T {
  return storage.run({ ...storage.getStore(), ...fields }, fn);
}

export function currentLogFields(): LogFields | undefined {
  return storage.getStore();
}
