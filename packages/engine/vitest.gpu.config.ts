import { packageTestConfig } from "../../vitest.shared.js";

// The engine's exactness suite on a GPU backend (ATTR_RAG_GPU, set by scripts/test-gpu.mjs): its own report,
// long limits (a software Vulkan device such as lavapipe runs each llama_decode in ~0.2 s).
export default packageTestConfig(import.meta.dirname, { testTimeout: 1_200_000, forks: true, include: ["test/gpu/**/*.test.ts"], report: "vitest-gpu.json" });
