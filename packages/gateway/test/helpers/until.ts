/**
 * Polls `probe` until it gives a value (or, for a boolean condition, true), failing with `what` after
 * `timeoutMs`. Tests wait on state the server reaches asynchronously (a slot released, KV freed, a batch
 * item done) without sleeping for a fixed time.
 */
export async function until<T>(probe: () => T | undefined | false | Promise<T | undefined | false>, what: string, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
