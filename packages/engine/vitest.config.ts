import { packageTestConfig } from "../../vitest.shared.js";

// Native tests load models and share the machine's cores: one file at a time, in forks (a native crash
// must not take the runner down with it).
// test/gpu/ runs on a GPU backend in its own run (vitest.gpu.config.ts, scripts/test-gpu.mjs).
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000, forks: true, exclude: ["test/gpu/**"] });
