/**
 * The crash test with a PostgreSQL journal: the campaign's runner has no
 * local journal, each spawn SIGKILLed at every crash point of
 * src/scheduler/crash-points.ts (its intent committed in PostgreSQL or not,
 * its create answered or not) and resumed until it exits 0. The same verdict
 * as crash.test.ts: every item done once, one net charge per item in the
 * emulator's ledger, every output present once with its sha256. Needs
 * `npm run build`.
 */
import { expect, it } from 'vitest';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import { crashPointsNeverFired, crashSchedule, runChaos, summaryLine } from './crash-helpers.js';

const server = postgresForFile();

describePostgres(`crash and resume with a PostgreSQL journal`, () => {
  it('does every item exactly once and charges it once, killed at every crash point', async () => {
    const schedule = crashSchedule(true);
    const summary = await runChaos({
      kills: schedule.length,
      items: 32,
      seed: 13,
      timeScale: 20,
      faults: false,
      training: true,
      crashPoints: schedule,
      journal: await server.newSchema(),
      maxSeconds: 160,
      ...(process.env.CRASH_TEST_VERBOSE ? { log: (line: string) => console.log(line) } : {}),
    });
    const line = summaryLine(summary);
    expect(summary.violations, line).toEqual([]);
    expect(summary.finalExit, line).toBe(0);
    // Every crash point really fired (not the fallback timer).
    expect(crashPointsNeverFired(summary), line).toEqual([]);
    expect(summary.states, line).toEqual({ succeeded: summary.items });
    expect(summary.items, line).toBe(32 + 1); // every generation + the training
    expect(summary.chargedOnce, line).toBe(summary.items);
    expect(summary.double, line).toBe(0);
    expect(summary.lost, line).toBe(0);
  }, 180_000);
});
