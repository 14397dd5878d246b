import { packageTestConfig } from "../../vitest.shared.js";

// Native tests load models and share the machine's cores: one file at a time, in forks (a native crash
// must not take the runner down with it).
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000, forks: true });
