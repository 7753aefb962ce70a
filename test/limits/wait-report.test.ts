/**
 * The gate's part of the wait promise (src/limits/wait-report.ts), on fake
 * timers: a long wait is logged while the log is quiet, and a wait longer
 * than any pause or window explains ends with RateWaitTooLongError.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { createGate, RateWaitTooLongError } from '../../src/limits/index.js';
import { longestGateWaitMs } from '../../src/limits/wait-report.js';
import { createLogger, WAIT_REPORT_MS } from '../../src/shared/index.js';
import { capture, jsonLogs } from '../helpers/index.js';

afterEach(() => {
  vi.useRealTimers();
});

/** One request a minute per bucket would hold the second one; trainings one an hour. */
const LIMITS = {
  ...SERVICE_RATE_LIMITS,
  requests: { count: 1, windowMs: 60_000 },
  trainings: { count: 1, windowMs: 3_600_000 },
};

describe('reportLongWaits', () => {
  it('logs a waiting request at least every WAIT_REPORT_MS, saying which bucket is full', async () => {
    vi.useFakeTimers();
    const sink = capture();
    const logger = createLogger({ format: 'json', destination: sink });
    const gate = createGate(LIMITS, { accountKey: 'acct-test-1', logger });
    await gate.acquire(['requests']);
    const second = gate.acquire(['requests']);
    await vi.advanceTimersByTimeAsync(25_000);
    const lines = jsonLogs(sink.text()).filter((l) =>
      l.msg.startsWith('waiting for the rate limits'),
    );
    expect(lines.length).toBeGreaterThanOrEqual(Math.floor(25_000 / WAIT_REPORT_MS));
    expect(lines[0]?.msg).toMatch(/1 request\(s\), the oldest for \d+ s \(requests full until/);
    await vi.advanceTimersByTimeAsync(60_000);
    await second;
    gate.close();
  });

  it('ends a wait longer than the longest pause plus the longest window', async () => {
    vi.useFakeTimers();
    const logger = createLogger({ format: 'json', destination: capture() });
    const gate = createGate(LIMITS, { accountKey: 'acct-test-2', logger });
    // A pause past any window: only the bound ends the wait.
    gate.pauseUntil(Date.now() + 10 * longestGateWaitMs(LIMITS));
    const waiting = gate.acquire(['trainings']).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(longestGateWaitMs(LIMITS) + 2_000);
    const error = await waiting;
    expect(error).toBeInstanceOf(RateWaitTooLongError);
    expect((error as RateWaitTooLongError).exitCode).toBe(4);
    gate.close();
  });
});
