// A real grpc-js server on 127.0.0.1 with a random port, returned as an async-disposable handle.
import * as grpc from "@grpc/grpc-js";

export interface GrpcServerHandle extends AsyncDisposable {
  /** "127.0.0.1:<port>" */
  readonly address: string;
}

export async function startGrpcServer(register: (server: grpc.Server) => void): Promise<GrpcServerHandle> {
  const server = new grpc.Server();
  register(server);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, boundPort) =>
      error ? reject(error) : resolve(boundPort),
    );
  });
  let disposed = false;
  return {
    address: `127.0.0.1:${port}`,
    async [Symbol.asyncDispose]() {
      if (disposed) return;
      disposed = true;
      await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
    },
  };
}
