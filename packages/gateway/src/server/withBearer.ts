import type { Metadata, UntypedServiceImplementation } from "@grpc/grpc-js";
import { checkBearer } from "./auth.js";

type AnyCall = { metadata: Metadata; emit?: (event: "error", err: unknown) => boolean };

/**
 * Wraps every handler of a service implementation so calls without the bearer token are refused before
 * the handler runs (unary: via the callback; streaming: with an error status).
 */
export function withBearer<T extends UntypedServiceImplementation>(impl: T, token: string | undefined): T {
  if (token === undefined) return impl;
  const wrapped: UntypedServiceImplementation = {};
  for (const [name, handler] of Object.entries(impl)) {
    wrapped[name] = ((call: AnyCall, callback?: (err: unknown) => void) => {
      try {
        checkBearer(call.metadata, token);
      } catch (err) {
        const e = err as { code: number; message: string };
        const status = { code: e.code, details: e.message };
        if (callback) callback(status);
        else call.emit?.("error", status);
        return;
      }
      (handler as (call: AnyCall, callback?: (err: unknown) => void) => void)(call, callback);
    }) as UntypedServiceImplementation[string];
  }
  return wrapped as T;
}
