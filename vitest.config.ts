import { defineConfig } from 'vitest/config';

// One config runs every package's tests. GPU suites share one Dawn instance per worker; lavapipe is
// CPU-bound, so files run in a small fork pool and tests may take seconds each.
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts'],
    setupFiles: ['scripts/test/setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // CI also writes JSON results, which .ci/run turns into one closing "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]] : ['default'],
  },
});
