import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Wall-clock figures run alone after the suite: vitest.timing.config.ts.
    exclude: ['test/**/*.timing.test.ts', '**/node_modules/**'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores here: more forks only add contention to timing-sensitive suites.
    pool: 'forks',
    maxWorkers: 2,
    restoreMocks: true,
    // A test that asserts nothing cannot fail: each test must make at least one `expect`.
    expect: { requireAssertions: true },
    // Fails a test file that leaves a server, socket, timer or child open.
    setupFiles: ['test/helpers/setup-leaks.ts'],
  },
});
