import { createServer } from "node:net";

/** A TCP port free on 127.0.0.1 right now (the OS picks it), for a server this process is about to start. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}
