/**
 * The one sleep (src/shared/sleep.ts) with deadlines beyond what one Node
 * timer can hold (2^31-1 ms, 24.8 days): such a timer overflows to 1 ms, so
 * a deadline loop re-arming it spins. Real timers: the proof is
 * the process's own `TimeoutOverflowWarning`, which Node emits on every
 * overflowing timer.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MAX_TIMER_STEP_MS, sleep, sleepUntil, timerStep } from '../../src/shared/index.js';

const TIMER_LIMIT_MS = 2 ** 31 - 1;

let warnings: Error[] = [];
const onWarning = (warning: Error) => {
  if (warning.name === 'TimeoutOverflowWarning') warnings.push(warning);
};
beforeEach(() => {
  warnings = [];
  process.on('warning', onWarning);
});
afterEach(() => {
  process.off('warning', onWarning);
});

/** Lets real time pass, long enough for a spinning 1 ms timer to fire dozens of times. */
const observe = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('timerStep', () => {
  it('keeps every step within what a Node timer holds', () => {
    expect(MAX_TIMER_STEP_MS).toBeLessThanOrEqual(TIMER_LIMIT_MS);
    expect(timerStep(-5)).toBe(0);
    expect(timerStep(1500)).toBe(1500);
    expect(timerStep(TIMER_LIMIT_MS + 1)).toBe(MAX_TIMER_STEP_MS);
    expect(timerStep(Number.POSITIVE_INFINITY)).toBe(MAX_TIMER_STEP_MS);
  });
});

describe('sleepUntil beyond 2^31 ms', () => {
  it.each([
    ['34.7 days', 3_000_000_000],
    ['a year 2100 deadline', Date.UTC(2100, 0, 1) - Date.now()],
  ])('%s: waits without overflowing, and an abort ends it promptly', async (_what, waitMs) => {
    const controller = new AbortController();
    let settled = false;
    const waiting = sleepUntil(Date.now() + waitMs, controller.signal).finally(() => {
      settled = true;
    });
    await observe(100);
    expect(settled).toBe(false);
    expect(warnings).toEqual([]);
    const reason = new Error('stop');
    const rejected = expect(waiting).rejects.toBe(reason);
    controller.abort(reason);
    // Promptly: settled before the event loop's next turn, no timer needed.
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(true);
    await rejected;
    expect(warnings).toEqual([]);
  });

  it('sleep(ms) with a huge ms does not overflow either', async () => {
    const controller = new AbortController();
    const waiting = sleep(2 ** 32, controller.signal);
    await observe(50);
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toThrow('stop');
    expect(warnings).toEqual([]);
  });
});
