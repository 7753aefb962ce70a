/**
 * The short version of `npm run chaos`: uploads, a training and
 * ~30 generations with the fault mix on, 5 seeded SIGKILLs, resumed until
 * done; every item charged once net of refunds, no output lost or doubled.
 * Needs `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { runChaos, summaryLine } from './chaos.js';

describe('chaos (short)', () => {
  it('survives kills and faults without double charges or lost outputs', async () => {
    const summary = await runChaos({
      kills: 5,
      items: 30,
      seed: 3,
      timeScale: 30,
      faults: true,
      training: true,
      crashEvery: 3,
      production: true,
      // A re-run over a grown job, killed too: only the new (and failed) items are made.
      regrow: { generations: 6, kills: 2 },
      maxSeconds: 120,
    });
    const line = summaryLine(summary);
    expect(summary.violations, line).toEqual([]);
    expect(summary.kills, line).toBeGreaterThanOrEqual(7);
    expect(summary.double, line).toBe(0);
    expect(summary.lost, line).toBe(0);
    expect(summary.chargedOnce, line).toBe(summary.items);
    // The faults of what surrounds the runner were met, not only armed.
    expect(summary.service.lostStops, line).toBeGreaterThanOrEqual(1);
    expect(summary.service.redisDown, line).toBeGreaterThanOrEqual(1);
  }, 150_000);
});
