import { packageTestConfig } from "../../vitest.shared.js";

// CLI tests spawn the real command (model loads, embedding, benchmarks, whole distributed clusters): one file
// at a time, so two cores are not oversubscribed and the timing-based parts (ack waits, deadlines) hold. The
// timeout only guards against hangs.
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000, forks: true });
