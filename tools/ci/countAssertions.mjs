// A vitest setup file: after each test, the number of assertions it made (vitest's own count, the one
// expect.assertions() checks) goes into the test's meta, so the timing report can show that a faster suite
// still asserts as much.
import { afterEach, expect } from "vitest";

afterEach((context) => {
  context.task.meta.assertions = expect.getState().assertionCalls;
});
