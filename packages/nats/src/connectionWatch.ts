import { setMaxListeners } from "node:events";
import type { NatsConnection } from "@nats-io/transport-node";

/**
 * Whether the connection is up, and a signal that aborts when it goes down: callers race their in-flight
 * requests and jobs against it, so a lost server ends them at once (UNAVAILABLE) instead of at a timeout.
 * The client reconnects by itself; the next call after a reconnect proceeds normally.
 */
export class ConnectionWatch {
  #connected = true;
  #lost = ConnectionWatch.#controller();

  /** Every in-flight request and job listens to it: no listener limit. */
  static #controller(): AbortController {
    const c = new AbortController();
    setMaxListeners(0, c.signal);
    return c;
  }

  constructor(readonly nc: NatsConnection) {
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === "disconnect" || s.type === "close") {
          if (this.#connected) {
            this.#connected = false;
            this.#lost.abort(new Error(s.type === "close" ? "the NATS connection was closed" : "the connection to NATS was lost"));
          }
        } else if (s.type === "reconnect") {
          this.#connected = true;
          this.#lost = ConnectionWatch.#controller();
        }
      }
    })();
  }

  get connected(): boolean {
    return this.#connected && !this.nc.isClosed();
  }

  /** Aborts when the current connection is lost (already aborted while disconnected). */
  get lost(): AbortSignal {
    return this.#lost.signal;
  }
}
