import type { Metadata } from "@grpc/grpc-js";
import { checkBearer } from "./auth.js";
import type { ServerContext } from "./serverContext.js";

/**
 * The gate every engine-running call passes: the bearer token, then a slot in the bounded admission queue;
 * `work` runs holding the slot, which is released however it ends.
 */
export async function admitted<T>(ctx: ServerContext, metadata: Metadata, signal: AbortSignal, work: () => Promise<T>): Promise<T> {
  checkBearer(metadata, ctx.runtime.config.authToken);
  const release = await ctx.admission.acquire(signal);
  try {
    return await work();
  } finally {
    release();
  }
}
