import { packageTestConfig } from "../../vitest.shared.js";

// The harness's tests run `attr-rag eval …` as a reader does (model loads, a judge, a gateway): one file at a
// time, so two cores are not oversubscribed. The timeout only guards against hangs.
export default packageTestConfig(import.meta.dirname, { testTimeout: 300_000, forks: true });
