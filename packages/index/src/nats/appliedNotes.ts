import type { IndexLogApplied } from "@attr-rag/contracts";

/** Notes kept for replay: a retried write finds its entry applied minutes ago, well within this many writes. */
const KEEP = 4_096;

/**
 * The notes a replica published for the entries it applied last, by entry id: a writer whose retry was a
 * duplicate of an entry already applied (same idempotency key) asks for them again, since it was not
 * listening when they were first published.
 */
export class AppliedNotes {
  readonly #notes = new Map<string, IndexLogApplied>();

  remember(entryId: string, note: IndexLogApplied): void {
    this.#notes.delete(entryId);
    this.#notes.set(entryId, note);
    if (this.#notes.size > KEEP) this.#notes.delete(this.#notes.keys().next().value!);
  }

  get(entryId: string): IndexLogApplied | undefined {
    return this.#notes.get(entryId);
  }
}
