import { defineConfig } from 'vitest/config';

// One config runs every package's tests. GPU suites share one Dawn instance per worker; lavapipe is
// CPU-bound, so files run in a small fork pool and tests may take seconds each.
export default defineConfig({
  test: {
    include: ['packages/*/src/**/*.test.ts', 'tests/**/*.test.ts'],
    setupFiles: ['scripts/test/setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    // lavapipe compiles each pipeline on the CPU (5-40 s for the big kernels with a cold Mesa shader
    // cache on a loaded 2-core machine), so CI, which may start with an empty cache, waits longer.
    testTimeout: process.env.CI ? 600_000 : 120_000,
    hookTimeout: process.env.CI ? 600_000 : 120_000,
    // CI also writes JSON results, which .ci/run turns into one closing "N passed, N failed" line.
    reporters: process.env.CI ? ['default', ['json', { outputFile: '.tmp/vitest-results.json' }]] : ['default'],
  },
});
