import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // dist/ emitted once, before any file (the CLI and integration tests run it).
    globalSetup: ["test/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Integration tests start real servers; keep CPU contention on 2-core CI machines sane.
    maxWorkers: 2,
  },
});
