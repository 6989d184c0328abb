import { defineConfig } from 'vitest/config';

// One config runs every package's tests. GPU suites share one Dawn instance per worker; lavapipe is
// CPU-bound, so files run in a small fork pool and tests may take seconds each.
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    env: { XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' },
  },
});
