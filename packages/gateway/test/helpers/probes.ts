import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { credentials, loadPackageDefinition, type ChannelCredentials, type Client } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";

const require = createRequire(import.meta.url);

type Callback<T> = (err: Error | null, value: T) => void;
interface HealthClient extends Client {
  check(request: { service: string }, callback: Callback<{ status: string }>): void;
}

/** grpc.health.v1.Health/Check for one service name ("" = the whole server). */
export function healthCheck(address: string, service: string, creds: ChannelCredentials = credentials.createInsecure()): Promise<string> {
  const protoPath = join(dirname(require.resolve("grpc-health-check/package.json")), "proto/health/v1/health.proto");
  const pkg = loadPackageDefinition(loadSync(protoPath, { enums: String })) as unknown as { grpc: { health: { v1: { Health: new (a: string, c: ChannelCredentials) => HealthClient } } } };
  const client = new pkg.grpc.health.v1.Health(address, creds);
  return new Promise<string>((resolve, reject) => client.check({ service }, (err, res) => (err ? reject(err) : resolve(res.status)))).finally(() => client.close());
}

/** The service names grpc.reflection.v1 lists. */
export function reflectedServices(address: string): Promise<string[]> {
  const protoPath = join(dirname(require.resolve("@grpc/reflection/package.json")), "build/proto/grpc/reflection/v1/reflection.proto");
  const pkg = loadPackageDefinition(loadSync(protoPath, { keepCase: true, oneofs: true })) as unknown as {
    grpc: { reflection: { v1: { ServerReflection: new (a: string, c: ChannelCredentials) => Client & { ServerReflectionInfo(): NodeJS.ReadWriteStream & { end(): void } } } } };
  };
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, credentials.createInsecure());
  const call = client.ServerReflectionInfo();
  return new Promise<string[]>((resolve, reject) => {
    call.on("data", (r: { list_services_response?: { service: { name: string }[] } }) => {
      resolve(r.list_services_response?.service.map((s) => s.name) ?? []);
      call.end();
    });
    call.on("error", reject);
    call.write({ list_services: "*" } as never);
  }).finally(() => client.close());
}
