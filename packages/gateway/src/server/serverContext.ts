import type { ServiceLog } from "@attr-rag/index";
import type { Runtime } from "../runtime/Runtime.js";
import type { Admission } from "./admission.js";
import type { StoppedCalls } from "./stoppedCalls.js";

/** What every handler of the gateway needs. */
export interface ServerContext {
  readonly runtime: Runtime;
  readonly admission: Admission;
  /** Calls aborted while they ran, and how their work stopped. */
  readonly stopped: StoppedCalls;
  readonly log: ServiceLog;
}
