import v8 from "node:v8";
import { runInNewContext } from "node:vm";

/** The real V8 collector, also when node was started without --expose-gc. */
export function exposedGc(): () => void {
  v8.setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
}

/** Memory usage after two real collections. */
export function settledMemory(gc: () => void): NodeJS.MemoryUsage {
  gc();
  gc();
  return process.memoryUsage();
}
