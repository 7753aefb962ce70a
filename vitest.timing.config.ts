/**
 * Tests whose assertions are wall-clock figures the issues fix (the review
 * page with 10,000 outputs: first paint < 2 s, a filter < 300 ms; report.html
 * and the review page with 100,000 outputs: < 5 MB, first paint < 2 s; runners
 * sharing an account: finish times within 1.25x, >= 0.95 of the limit). They run
 * after the main suite, alone, so the figures measure the page and not the
 * other test files sharing the two cores (`npm test` runs both configs).
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: {
    ...base.test,
    include: [
      'test/review/review-large-browser.test.ts',
      'test/review/pages-100k-browser.test.ts',
      'test/limits/fair-share-cli.test.ts',
    ],
    exclude: ['**/node_modules/**'],
    maxWorkers: 1,
  },
});
