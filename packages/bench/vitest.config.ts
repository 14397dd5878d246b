import { packageTestConfig } from "../../vitest.shared.js";

// The script tests start servers, a cluster and llama.cpp: one file at a time, with room for a busy machine.
export default packageTestConfig(import.meta.dirname, { testTimeout: 180_000, forks: true });
