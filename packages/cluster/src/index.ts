// Public API of @attr-rag/cluster: a whole distributed Attr-RAG as local processes (nats-server with the
// per-role users of deploy/nats, the index, workers, the selector and gateways), for `attr-rag cluster`,
// deploy/local/cluster, the cluster benchmarks and the distributed tests. Siblings import only from here.
export { LocalCluster, NATS_CONFIG, ROLES, type LocalClusterOptions, type Role } from "./localCluster.js";
export { CLI_MAIN, ClusterProcess } from "./clusterProcess.js";
export { checkClusterPassword, newClusterPassword } from "./clusterPasswords.js";
