import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { GateClosedError } from '../../src/limits/index.js';
import { maxInWindow, onFakeClock, saturate, settle, testGate, useFakeClock } from './helpers.js';

const W = 300;
/** The gate's default margin at these windows (the larger of 25 ms and 1%). */
const MARGIN = 25;

afterEach(() => {
  vi.useRealTimers();
});

describe('local gate: sliding windows', () => {
  // The gate's own clock and timers, faked: the grant times are what it decided, to the ms.
  beforeEach(useFakeClock);

  it('never grants more than N in any window of W', async () => {
    const gate = testGate({ requests: { count: 5, windowMs: W } });
    const times = await onFakeClock(saturate(gate, ['requests'], 23));
    expect(times).toHaveLength(23);
    expect(maxInWindow(times, W)).toBeLessThanOrEqual(5);
    // The first N go at once; the gate does not over-throttle either: the
    // next goes as the first slot's window (and margin) ends.
    expect(times[4]).toBe(times[0]);
    expect(times[5]! - times[0]!).toBe(W + MARGIN);
  });

  it('reaches the limit when saturated (>= 0.95 of N/W, margin included)', async () => {
    const windowMs = 600;
    const gate = testGate({ generations: { count: 20, windowMs } });
    const times = await onFakeClock(saturate(gate, ['generations'], 20 * 5));
    expect(maxInWindow(times, windowMs)).toBeLessThanOrEqual(20);
    // Steady-state rate: grants after the first burst over the time they took.
    const rate = (times.length - 20) / (times.at(-1)! - times[0]!);
    expect(rate / (20 / windowMs)).toBeGreaterThanOrEqual(0.95);
  });

  it('takes all buckets at once and never holds one while waiting for another', async () => {
    const gate = testGate({
      requests: { count: 3, windowMs: W },
      generations: { count: 1, windowMs: 5_000 },
    });
    await gate.acquire(['requests', 'generations']);
    let createGranted = false;
    const create = gate.acquire(['requests', 'generations']).then(() => {
      createGranted = true;
    });
    await settle();
    expect(createGranted).toBe(false);
    // The blocked create holds no requests slot: one poll still fits (3 - 1 taken - 1 claimed).
    await gate.acquire(['requests']);
    expect(gate.snapshot().buckets.requests.used).toBe(2);
    expect(gate.snapshot().buckets.generations.used).toBe(1);
    // ...but a second poll may not take the slot the create has claimed.
    let secondPoll = false;
    const poll = gate.acquire(['requests']).then(() => {
      secondPoll = true;
    });
    await settle();
    expect(secondPoll).toBe(false);
    gate.close();
    await expect(create).rejects.toBeInstanceOf(GateClosedError);
    await expect(poll).rejects.toBeInstanceOf(GateClosedError);
  });

  it('serves waiters of the same buckets in FIFO order', async () => {
    const gate = testGate({ uploads: { count: 2, windowMs: 150 } });
    const order: number[] = [];
    await onFakeClock(
      Promise.all(
        Array.from({ length: 8 }, (_, i) => gate.acquire(['uploads']).then(() => order.push(i))),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('local gate: feedback', () => {
  it('a 429 pauses every bucket until Retry-After; overlapping pauses keep the later end', async () => {
    const gate = testGate({ requests: { count: 100, windowMs: 1000 } });
    const events: string[] = [];
    gate.on('pause', (e) => events.push(`pause:${e.reason}`));
    gate.on('resume', () => events.push('resume'));
    const start = Date.now();
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 250 });
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 100 }); // earlier end: ignored
    expect(gate.pausedUntil).toBeGreaterThanOrEqual(start + 250);
    const grants = await Promise.all([
      gate.acquire(['requests']).then(() => Date.now()),
      gate.acquire(['uploads', 'requests']).then(() => Date.now()),
    ]);
    for (const at of grants) expect(at).toBeGreaterThanOrEqual(start + 250);
    expect(events).toEqual(['pause:rate_limited', 'resume']);
    expect(gate.pausedUntil).toBeNull();
  });

  it('pauseUntil restores a persisted not-before', async () => {
    const gate = testGate({});
    const until = Date.now() + 150;
    gate.pauseUntil(until);
    gate.pauseUntil(until - 100); // never shortens
    await gate.acquire(['trainings', 'requests']);
    expect(Date.now()).toBeGreaterThanOrEqual(until);
  });

  it('a pause beyond what one timer holds (34.7 days) waits in steps, never spins', async () => {
    const overflows: Error[] = [];
    const onWarning = (w: Error) => {
      if (w.name === 'TimeoutOverflowWarning') overflows.push(w);
    };
    process.on('warning', onWarning);
    try {
      const gate = testGate({});
      const resumes: unknown[] = [];
      gate.on('resume', (e) => resumes.push(e));
      gate.pauseUntil(Date.now() + 3_000_000_000);
      const controller = new AbortController();
      const waiting = gate.acquire(['requests'], controller.signal);
      // Real time for a timer overflowed to 1 ms to fire dozens of times.
      await new Promise((resolve) => setTimeout(resolve, 100));
      controller.abort(new Error('stop'));
      await expect(waiting).rejects.toThrow();
      expect(overflows).toEqual([]);
      expect(resumes).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('X-RateLimit-Remaining below our view shrinks our allowance until the window passes', async () => {
    useFakeClock();
    const gate = testGate({ requests: { count: 10, windowMs: W } });
    const shrinks: number[] = [];
    gate.on('shrink', (e) => shrinks.push(e.phantoms));
    await gate.acquire(['requests']);
    // We used 1 of 10, the service says 3 remain: someone else used 6.
    gate.feedback({ buckets: ['requests'], status: 200, limit: 10, remaining: 3 });
    expect(shrinks).toEqual([6]);
    expect(gate.snapshot().buckets.requests).toMatchObject({ used: 1, phantom: 6, available: 3 });
    const start = Date.now();
    const times = await onFakeClock(saturate(gate, ['requests'], 4));
    expect(times[2]).toBe(start);
    expect(times[3]! - start).toBeGreaterThanOrEqual(W); // the 4th waits for the window
    // Remaining at or above our view changes nothing.
    gate.feedback({ buckets: ['requests'], status: 200, limit: 10, remaining: 10 });
    expect(shrinks).toHaveLength(1);
  });

  it('reads Remaining against the bucket whose limit matches the header', async () => {
    const gate = testGate({ generations: { count: 20, windowMs: W } });
    await gate.acquire(['requests', 'generations']);
    gate.feedback({ buckets: ['requests', 'generations'], status: 202, limit: 20, remaining: 15 });
    expect(gate.snapshot().buckets.generations.phantom).toBe(4);
    expect(gate.snapshot().buckets.requests.phantom).toBe(0);
  });
});

describe('local gate: abort and close', () => {
  it('an aborted wait rejects with the reason and frees its claim for later waiters', async () => {
    const gate = testGate({
      requests: { count: 1, windowMs: 5_000 },
      generations: { count: 1, windowMs: 5_000 },
    });
    await gate.acquire(['generations']);
    const controller = new AbortController();
    const blocked = gate.acquire(['requests', 'generations'], controller.signal);
    let pollDone = false;
    const poll = gate.acquire(['requests']).then(() => {
      pollDone = true;
    });
    await settle();
    expect(pollDone).toBe(false); // the blocked create claims the only requests slot
    controller.abort(new Error('stop'));
    await expect(blocked).rejects.toThrow('stop');
    await poll;
    expect(pollDone).toBe(true);
    await expect(
      gate.acquire(['requests'], AbortSignal.abort(new Error('already'))),
    ).rejects.toThrow('already');
  });

  it('close rejects waiters and later acquires', async () => {
    const gate = testGate({ uploads: { count: 1, windowMs: 60_000 } });
    await gate.acquire(['uploads']);
    const waiting = gate.acquire(['uploads']);
    expect(gate.snapshot().waiting).toBe(1);
    gate.close();
    await expect(waiting).rejects.toBeInstanceOf(GateClosedError);
    await expect(gate.acquire(['requests'])).rejects.toBeInstanceOf(GateClosedError);
  });

  it('an empty bucket list goes at once', async () => {
    const gate = testGate({});
    gate.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 60_000 });
    await expect(gate.acquire([])).resolves.toBeUndefined();
    expect(gate.snapshot().waiting).toBe(0);
  });
});
