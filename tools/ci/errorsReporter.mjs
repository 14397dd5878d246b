// A vitest reporter that writes the errors no test owns, which vitest's JSON report leaves out or hides in an
// empty message: a file that failed to load or whose top-level hook threw, a describe whose beforeAll or
// afterAll threw (its tests then only show as skipped: a suite that needs a missing nats-server), and errors
// no file caught. tools/ci/run-tests.mjs counts each as a failure and prints its message (testSummary.mjs).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";

export default class ErrorsReporter {
  /** @param {{ outputFile: string, root: string }} options */
  constructor(options) {
    this.outputFile = options.outputFile;
    this.root = options.root;
  }

  onTestRunEnd(testModules, unhandledErrors) {
    const errors = [];
    const message = (e) => String(e?.message ?? e ?? "no message");
    for (const module of testModules) {
      const file = relative(this.root, module.moduleId);
      for (const e of module.errors()) errors.push({ file, message: message(e) });
      for (const suite of module.children.allSuites()) for (const e of suite.errors()) errors.push({ file, suite: suite.fullName, message: message(e) });
    }
    for (const e of unhandledErrors) errors.push({ message: `unhandled: ${message(e)}` });
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, JSON.stringify({ errors }, null, 1));
  }
}
