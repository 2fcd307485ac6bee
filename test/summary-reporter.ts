import type { Reporter, TestModule } from "vitest/node";

/** Ends every run with the plain line CI reads: "N passed, N failed" (plus ", N skipped" when any were). */
export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: readonly TestModule[]) {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === "passed") passed++;
        else if (state === "failed") failed++;
        else skipped++;
      }
      // A file that failed to load has no tests but is a failure all the same.
      if (module.state() === "failed" && [...module.children.allTests()].length === 0) failed++;
    }
    console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  }
}
