/**
 * `npm run test:fast`: the unit tests, for the edit-test loop (under a minute
 * on two cores). Selected by name, not by a list: a test file that spawns
 * `bin/ibatch.js` or other processes to kill (CLI campaigns, crash/chaos,
 * journal kill -9, Redis fail-over), runs whole campaigns in process (the
 * fault matrix, behaviour switches, pipeline reuse), packs the package, drives
 * a browser, benchmarks or runs the deployment examples is named
 * `*.slow.test.ts` (so is one running whole `ibatch run`s in process); the wall-clock checks are `*.timing.test.ts`. `npm test`
 * runs them all.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: ['**/node_modules/**', 'test/**/*.slow.test.ts', 'test/**/*.timing.test.ts'],
      // The PostgreSQL half of the store tests starts a server (test/journal/helpers.ts).
      env: { IBATCH_TEST_NO_SERVERS: '1' },
    },
  }),
);
