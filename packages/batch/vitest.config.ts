import { packageTestConfig } from "../../vitest.shared.js";

// Batch tests start real nats-servers and SQLite stores (and one kills a child mid-batch): one file at a time.
export default packageTestConfig(import.meta.dirname, { testTimeout: 120_000, forks: true });
