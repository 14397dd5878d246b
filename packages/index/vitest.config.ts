import { packageTestConfig } from "../../vitest.shared.js";

// Store tests open real SQLite files and spawn crash children: one file at a time, in forks.
export default packageTestConfig(import.meta.dirname, { testTimeout: 120_000, forks: true });
