import { packageTestConfig } from "../../vitest.shared.js";

export default packageTestConfig(import.meta.dirname, { testTimeout: 180_000, forks: true });
