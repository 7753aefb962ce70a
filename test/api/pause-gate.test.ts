/**
 * The gate a client uses when the caller brings none (src/api/pause-gate.ts):
 * no rate limiting, only the pause after a 429. On a fake clock, so the test
 * says to the millisecond when a request may go.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PauseGate } from '../../src/api/pause-gate.js';

beforeEach(() => {
  vi.useFakeTimers({ now: Date.UTC(2026, 0, 1) });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Starts an acquire and reports whether it has been granted yet. */
function acquireWatched(gate: PauseGate, signal?: AbortSignal) {
  let granted = false;
  const done = gate.acquire(['requests'], signal).then(() => {
    granted = true;
  });
  return { done, granted: () => granted };
}

describe('PauseGate', () => {
  it('lets requests go at once until a 429', async () => {
    const gate = new PauseGate();
    gate.feedback({ buckets: ['requests'], status: 503, retryAfterMs: 60_000 });
    const request = acquireWatched(gate);
    await vi.advanceTimersByTimeAsync(0);
    expect(request.granted()).toBe(true);
    expect(gate.pausedUntil).toBe(0);
  });

  it('holds every request until the Retry-After has elapsed, not a millisecond less', async () => {
    const gate = new PauseGate();
    const start = Date.now();
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 5_000 });
    expect(gate.pausedUntil).toBe(start + 5_000);
    const request = acquireWatched(gate);
    await vi.advanceTimersByTimeAsync(4_999);
    expect(request.granted()).toBe(false);
    await vi.advanceTimersByTimeAsync(2);
    expect(request.granted()).toBe(true);
    expect(gate.pausedUntil).toBe(0);
  });

  it('a later 429 extends the pause of a request already waiting; an earlier end is ignored', async () => {
    const gate = new PauseGate();
    const start = Date.now();
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 2_000 });
    const request = acquireWatched(gate);
    await vi.advanceTimersByTimeAsync(1_000);
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 3_000 });
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 10 });
    expect(gate.pausedUntil).toBe(start + 4_000);
    await vi.advanceTimersByTimeAsync(2_500);
    expect(request.granted()).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(request.granted()).toBe(true);
  });

  it('a 429 without Retry-After pauses for one second', async () => {
    const gate = new PauseGate();
    const start = Date.now();
    gate.feedback({ buckets: ['requests'], status: 429 });
    expect(gate.pausedUntil).toBe(start + 1_000);
  });

  it('an abort ends the wait with its reason', async () => {
    const gate = new PauseGate();
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 60_000 });
    const controller = new AbortController();
    const waiting = gate.acquire(['requests'], controller.signal);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
  });
});
