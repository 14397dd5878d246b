import type { ServiceLog } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import type { Admission } from "./admission.js";

/** What every handler of the gateway needs. */
export interface ServerContext {
  readonly runtime: Runtime;
  readonly admission: Admission;
  readonly log: ServiceLog;
}
