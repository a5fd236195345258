import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // e2e tests spawn gateways and downstream servers; two cores cannot take much more.
    maxWorkers: 2,
    fileParallelism: true,
  },
});
