import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Integration tests share one local stack (DynamoDB Local, s3rver, the API) started once.
    globalSetup: ["test/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Two cores: more workers only fight over the CPU (and the browser, later).
    maxWorkers: 2,
    env: { LOG_LEVEL: "warn" },
  },
});
