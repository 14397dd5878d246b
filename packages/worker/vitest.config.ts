import { packageTestConfig } from "../../vitest.shared.js";

// Tests load models and start nats-server and worker processes: one file at a time, in forks.
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000, forks: true });
