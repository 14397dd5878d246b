import { packageTestConfig } from "../../vitest.shared.js";

// Each test starts its own nats-server; files run one at a time so two cores are not oversubscribed.
export default packageTestConfig(import.meta.dirname, { testTimeout: 60_000, forks: true });
