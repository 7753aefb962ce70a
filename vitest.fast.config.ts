/**
 * `npm run test:fast`: the unit tests, for the edit-test loop (under a minute
 * on two cores). Left out, and run by `npm test` only: anything that spawns
 * `bin/ibatch.js` or other processes to kill (CLI campaigns, crash/chaos,
 * journal kill -9, Redis fail-over), whole-run campaigns in process (the
 * fault matrix, behaviour switches, pipeline reuse), packaging, browsers,
 * benchmarks and the deployment examples.
 */
import { defineConfig, mergeConfig } from 'vitest/config';
import base from './vitest.config.js';

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        '**/node_modules/**',
        'test/examples/**',
        'test/package/**',
        'test/bench/**',
        'test/chaos/**',
        'test/scheduler/crash.test.ts',
        'test/scheduler/crash-postgres.test.ts',
        'test/cli/postgres-journal.test.ts',
        'test/scheduler/faults-100.test.ts',
        'test/scheduler/pipeline-e2e.test.ts',
        'test/scheduler/reuse.test.ts',
        'test/scheduler/item-window.test.ts',
        'test/cli/plan-next-run.test.ts',
        'test/faults/fault-matrix.test.ts',
        'test/faults/behaviour-switches.test.ts',
        'test/outputs/report-browser.test.ts',
        'test/outputs/report-run-browser.test.ts',
        'test/review/review-browser.test.ts',
        'test/review/review-accept-browser.test.ts',
        'test/review/review-large-browser.test.ts',
        'test/review/pages-100k-browser.test.ts',
        'test/review/review-cli.test.ts',
        'test/cli/emulator.test.ts',
        'test/cli/run-semantics.test.ts',
        'test/cli/converge.test.ts',
        'test/cli/review-decisions.test.ts',
        'test/cli/provenance.test.ts',
        'test/cli/lost-journal.test.ts',
        'test/cli/errors.test.ts',
        'test/cli/deliver.test.ts',
        'test/job/extreme-fuzz.test.ts',
        'test/cli/stop-status.test.ts',
        'test/cli/notify.test.ts',
        'test/cli/retry-after.test.ts',
        'test/cli/signals-pipes.test.ts',
        'test/cli/protected-paths.test.ts',
        'test/cli/preflight.test.ts',
        'test/cli/download-failures.test.ts',
        'test/cli/output-disk-full.test.ts',
        'test/cli/disk-faults.test.ts',
        'test/cli/progress-tmux.test.ts',
        'test/cli/spend-figures.test.ts',
        'test/cli/all-or-nothing.test.ts',
        'test/cli/training-estimate.test.ts',
        'test/scheduler/journal-locks.test.ts',
        'test/security/key-leaks.test.ts',
        'test/security/hostile-server.test.ts',
        'test/journal/durability.test.ts',
        'test/journal/lock.test.ts',
        'test/limits/redis-gate.test.ts',
        'test/limits/redis-gate-emulator.test.ts',
        'test/limits/fair-share-cli.test.ts',
        'test/helpers/setup-leaks.test.ts',
      ],
    },
  }),
);
