// A vitest reporter that writes what tools/ci/run-tests.mjs needs to show where the suite's time goes: the
// run's wall time, each test file's whole time (import, hooks and tests: a cluster started in beforeAll counts
// here, where the JSON report's per-test times miss it), each test's time and the assertions it made
// (countAssertions.mjs puts that count in the test's meta).
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, relative } from "node:path";

export default class TimingReporter {
  /** @param {{ outputFile: string, root: string }} options */
  constructor(options) {
    this.outputFile = options.outputFile;
    this.root = options.root;
    this.start = Date.now();
  }

  onInit() {
    this.start = Date.now();
  }

  onTestRunEnd(testModules) {
    const files = testModules.map((module) => {
      const d = module.diagnostic();
      const tests = [...module.children.allTests()].map((test) => ({
        name: test.fullName,
        state: test.result().state,
        seconds: (test.diagnostic()?.duration ?? 0) / 1000,
        assertions: test.meta().assertions ?? 0,
      }));
      return {
        file: relative(this.root, module.moduleId),
        seconds: (d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration) / 1000,
        tests,
      };
    });
    mkdirSync(dirname(this.outputFile), { recursive: true });
    writeFileSync(this.outputFile, JSON.stringify({ wallSeconds: (Date.now() - this.start) / 1000, files }, null, 1));
  }
}
