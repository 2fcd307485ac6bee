import { defineConfig } from "vitest/config";

// Six projects (docs/design.md, "Tests"): `unit` needs no service and is the inner loop
// (npm run test:unit); `integration`, `infra`, `e2e`, `hostile` and `final` share one local stack that
// test/global-setup.ts starts once for whichever of them run. `npm test` runs them all.
const withStack = { globalSetup: ["test/global-setup.ts"], testTimeout: 60_000, hookTimeout: 120_000 };

export default defineConfig({
  test: {
    // Two cores: more workers only fight over the CPU and the browser.
    maxWorkers: 2,
    env: { LOG_LEVEL: "warn" },
    reporters: ["default", "./test/summary-reporter.ts"],
    coverage: {
      provider: "v8",
      include: ["lib/**/*.ts"],
      reporter: ["text-summary"],
    },
    projects: [
      // vmThreads: a file's modules load into a fresh VM context on a warm worker thread, not a fresh
      // process, so the inner loop stays under 30 s on a busy machine (15 s here when quiet, 26 s
      // beside two CPU-bound processes); what takes seconds of CPU by design is in infra.
      // Some wait on real timers (deadlines, long polls, visibility timeouts): 30 s, not vitest's 5,
      // for a machine busy with the other projects.
      { test: { name: "unit", include: ["test/unit/**/*.test.ts"], pool: "vmThreads", testTimeout: 30_000 } },
      { test: { name: "integration", include: ["test/integration/**/*.test.ts"], ...withStack } },
      { test: { name: "infra", include: ["test/infra/**/*.test.ts"], ...withStack } },
      { test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], ...withStack } },
      // The hostile-page zoo runs last and alone (after every other project's files): it measures
      // its own stack's memory, processes and timings, which other files' renders would blur, and
      // its wedged browsers and memory bombs would slow theirs.
      { test: { name: "hostile", include: ["test/hostile/**/*.test.ts"], ...withStack, sequence: { groupOrder: 1 } } },
      // Last of all: the ledger's invariants over everything the suite did (`npm run admin -- reconcile --check`).
      { test: { name: "final", include: ["test/final/**/*.test.ts"], ...withStack, sequence: { groupOrder: 2 } } },
    ],
  },
});
