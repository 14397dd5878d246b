import type { Server, ServerCredentials } from "@grpc/grpc-js";

/** Binds `server` to host:port ("[::1]" style for IPv6) and returns the address as bound (port 0 = a free one). */
export async function listen(server: Server, host: string, port: number, credentials: ServerCredentials, what: string): Promise<{ address: string; port: number }> {
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    server.forceShutdown();
    throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const hostPart = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  try {
    const bound = await new Promise<number>((resolve, reject) => {
      server.bindAsync(`${hostPart}:${port}`, credentials, (err, p) => (err ? reject(err) : resolve(p)));
    });
    return { address: `${hostPart}:${bound}`, port: bound };
  } catch (err) {
    server.forceShutdown();
    throw new Error(`${what}: cannot listen on ${hostPart}:${port}: ${(err as Error).message}`, { cause: err });
  }
}

/** Stops accepting calls and lets running ones finish for up to `graceMs`, then cancels whatever is left. */
export function shutdown(server: Server, graceMs: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(() => {
      server.forceShutdown();
      resolve();
    }, graceMs);
    server.tryShutdown(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
