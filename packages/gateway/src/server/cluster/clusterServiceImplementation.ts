import type { ClusterServiceServer } from "@attr-rag/contracts";
import type { ServiceLog } from "@attr-rag/index";
import type { Runtime } from "../../runtime/Runtime.js";
import type { Admission } from "../admission.js";
import { unaryBatchCall } from "../batch/batchCall.js";
import { clusterState } from "./clusterState.js";

/** ClusterService: a read of the engines behind this gateway (see clusterState). */
export function clusterServiceImplementation(runtime: Runtime, admission: Admission, log: ServiceLog): ClusterServiceServer {
  return { getCluster: unaryBatchCall(log, "GetCluster", () => clusterState(runtime, admission)) };
}
