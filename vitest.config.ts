import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Wall-clock figures run alone after the suite: vitest.timing.config.ts.
    exclude: [
      'test/review/review-large-browser.test.ts',
      'test/review/pages-100k-browser.test.ts',
      'test/limits/fair-share-cli.test.ts',
      '**/node_modules/**',
    ],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores here: more forks only add contention to timing-sensitive suites.
    pool: 'forks',
    maxWorkers: 2,
    restoreMocks: true,
    // Fails a test file that leaves a server, socket, timer or child open.
    setupFiles: ['test/helpers/setup-leaks.ts'],
  },
});
