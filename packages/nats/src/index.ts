// Public API of @attr-rag/nats: NATS plumbing shared by the distributed roles. Siblings import only from here.
export { connectNats, NatsConnectError, ROLE_NATS_WAIT_MS, roleNatsWaitMs, type NatsClientOptions } from "./connect.js";
export { ConnectionWatch } from "./connectionWatch.js";
export { natsServerAvailable, natsServerMissing, startNatsServer, type NatsServer, type NatsServerOptions } from "./natsServer.js";
export { DEFAULT_JOB_QUEUE, ensureDurableConsumer, ensureJobStreams, ensureStream, ensureWorkerConsumer, type JobQueueSettings } from "./jobStreams.js";
export { Code, RemoteError, requestProto, serveService, type EndpointHandler, type ProtoCodec, type RequestOptions } from "./protoRpc.js";
export type { Service } from "@nats-io/services";
export type { NatsConnection } from "@nats-io/transport-node";
export { headers as natsHeaders, NoRespondersError } from "@nats-io/transport-node";
