/**
 * A campaign (an upload set, a training, ~48 generations
 * with copies: 2 and a `from:` chain) on a time-scaled emulator, run by the
 * real CLI in a child process that is SIGKILLed at least 20 times (at every
 * crash point, then at seeded random moments) and resumed until it exits 0.
 * Then: every item done exactly once, one net charge per logical item in the
 * emulator's ledger, every output present once with its sha256, no partial
 * files, journal integrity ok. Needs `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { CrashSpecError, parseCrashSpec } from '../../src/scheduler/crash-points.js';
import { crashPointsNeverFired, crashSchedule, runChaos, summaryLine } from './crash-helpers.js';

describe('crash and resume (SIGKILL)', () => {
  it('does every item exactly once and charges it once, whatever instant it is killed at', async () => {
    const schedule = crashSchedule(true);
    const summary = await runChaos({
      kills: 22,
      items: 64,
      seed: 11,
      timeScale: 20,
      faults: false,
      training: true,
      crashPoints: schedule,
      // Then a re-run over a grown job, killed again: it creates only the new items.
      regrow: { generations: 12, kills: 3 },
      maxSeconds: 160,
      ...(process.env.CRASH_TEST_VERBOSE ? { log: (line: string) => console.log(line) } : {}),
    });
    const line = summaryLine(summary);
    expect(summary.violations, line).toEqual([]);
    expect(summary.finalExit, line).toBe(0);
    expect(summary.kills, line).toBeGreaterThanOrEqual(20);
    // Every crash point really fired (not the fallback timer).
    expect(crashPointsNeverFired(summary), line).toEqual([]);
    expect(summary.states, line).toEqual({ succeeded: summary.items });
    expect(summary.items, line).toBe(64 + 12 + 1); // every generation of the grown job + the training
    expect(summary.chargedOnce, line).toBe(summary.items);
    expect(summary.double, line).toBe(0);
    expect(summary.lost, line).toBe(0);
  }, 180_000);
});

describe('IBATCH_CRASH_AT', () => {
  it('parses counts, probabilities and the wildcard', () => {
    expect(parseCrashSpec('after-intent:3, training-after-intent@0.25,*@1')).toEqual([
      { point: 'after-intent', nth: 3 },
      { point: 'training-after-intent', probability: 0.25 },
      { point: '*', probability: 1 },
    ]);
  });

  it('refuses a typo instead of silently testing nothing', () => {
    for (const bad of ['after-intnet:1', 'after-intent', 'after-intent:0', 'after-intent@2']) {
      expect(() => parseCrashSpec(bad), bad).toThrow(CrashSpecError);
    }
  });
});
