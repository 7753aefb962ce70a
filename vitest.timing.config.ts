/**
 * The test files named `*.timing.test.ts`: pages with 10,000 and 100,000
 * outputs in headless Chromium, and runners sharing an account. Each check
 * compares two things measured side by side (finish times of runners started
 * together) or keeps a margin over its target that a second busy process on
 * two cores does not use up; the absolute targets are `npm run bench`'s. They
 * run after the main suite, one file at a time, so the other test files do not
 * share the two cores with them (`npm test` runs both configs).
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: {
    ...base.test,
    include: ['test/**/*.timing.test.ts'],
    exclude: ['**/node_modules/**'],
    maxWorkers: 1,
  },
});
