import { packageTestConfig } from "../../vitest.shared.js";

export default packageTestConfig(import.meta.dirname, { testTimeout: 120_000, forks: true });
