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
