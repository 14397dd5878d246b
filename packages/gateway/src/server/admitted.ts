import type { Metadata } from "@grpc/grpc-js";
import { checkBearer } from "./auth.js";
import type { ServerContext } from "./serverContext.js";

/**
 * The gate every engine-running call passes: the bearer token, then `validate` (so a bad request gets its
 * precise code at once instead of waiting in, or being refused by, a full queue), then a slot in the
 * bounded admission queue; `work` runs holding the slot, which is released however it ends. While it runs it
 * also holds the runtime's interactive gate, so batch items make way for it (see InteractiveGate).
 */
export async function admitted<P, T>(ctx: ServerContext, metadata: Metadata, signal: AbortSignal, validate: () => P, work: (prepared: P) => Promise<T>): Promise<T> {
  checkBearer(metadata, ctx.runtime.config.authToken);
  const prepared = validate();
  const release = await ctx.admission.acquire(signal);
  const leave = ctx.runtime.interactive.enter();
  try {
    return await work(prepared);
  } finally {
    leave();
    release();
  }
}
