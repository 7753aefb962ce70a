/**
 * The crash schedule of test/scheduler/crash.slow.test.ts: each crash point of
 * src/scheduler/crash-points.ts at least once (the training ones first, as
 * the training is the first thing a run does), then seeded random kills.
 * The kill-and-resume loop and the ledger/journal/output checks live in
 * test/chaos/ and are shared with `npm run chaos`.
 */
import { CRASH_POINTS } from '../../src/scheduler/crash-points.js';
import type { ChaosSummary } from '../chaos/chaos.js';

/**
 * `IBATCH_CRASH_AT` values, one per run: the training points fire on the
 * first runs (intent, then the re-sent create's response), the generation
 * points at varied occurrences so they hit different items.
 */
export function crashSchedule(training: boolean): string[] {
  const generationPoints = CRASH_POINTS.filter((p) => !p.startsWith('training-'));
  const schedule = training ? ['training-after-intent:1', 'training-after-create-response:1'] : [];
  for (const [round, nth] of [1, 3].entries()) {
    for (const point of generationPoints) schedule.push(`${point}:${nth + round}`);
  }
  return schedule;
}

/** Points no kill fired at (the fallback timer stood in for them): [] when every one fired. */
export function crashPointsNeverFired(summary: ChaosSummary): string[] {
  return CRASH_POINTS.filter(
    (point) =>
      !Object.entries(summary.crashPointKills).some(
        ([spec, count]) => spec.startsWith(`${point}:`) && count > 0,
      ),
  );
}

export { runChaos, summaryLine } from '../chaos/chaos.js';
