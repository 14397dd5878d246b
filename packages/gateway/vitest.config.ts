import { packageTestConfig } from "../../vitest.shared.js";

// Gateway tests load the real model and start real servers: one file at a time, in forks.
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000, forks: true });
