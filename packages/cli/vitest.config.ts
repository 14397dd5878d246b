import { packageTestConfig } from "../../vitest.shared.js";

// CLI tests spawn the real command (model loads, embedding, benchmarks); on a loaded 2-core machine one can
// take minutes, so the timeout only guards against hangs.
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000 });
