/** Gates under test, closed after each test; grant-time recording and window checks. */
import { afterEach, vi } from 'vitest';
import type { Bucket, RateLimits } from '../../src/contract/index.js';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { createLocalGate, type LocalGateOptions, type RateGate } from '../../src/limits/index.js';

const gates: RateGate[] = [];
afterEach(() => {
  for (const gate of gates.splice(0)) gate.close();
});

export function testGate(overrides: Partial<RateLimits>, options: LocalGateOptions = {}): RateGate {
  const gate = createLocalGate({ ...SERVICE_RATE_LIMITS, ...overrides }, options);
  gates.push(gate);
  return gate;
}

/**
 * Acquires `n` times concurrently and returns the grant stamps the gate
 * reported (its own clock). Stamps, not resolution times: on a loaded 2-core
 * box the process can be descheduled for tens of ms between a synchronous
 * grant and the test's callback, which would blur what the gate decided.
 */
export async function saturate(gate: RateGate, buckets: Bucket[], n: number): Promise<number[]> {
  const times: number[] = [];
  const stop = gate.on('grant', (event) => times.push(event.at));
  try {
    await Promise.all(Array.from({ length: n }, () => gate.acquire(buckets)));
  } finally {
    stop();
  }
  return times.sort((a, b) => a - b);
}

/** Most grants inside any half-open window [t, t + windowMs). */
export function maxInWindow(times: readonly number[], windowMs: number): number {
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end += 1) {
    while (times[end]! - times[start]! >= windowMs) start += 1;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/** Resolves on the next macrotask turn; lets pending timers and microtasks settle. */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Fakes the clock and timers a gate reads (Date and setTimeout); setImmediate
 * stays real so `settle` still turns. Undo with `vi.useRealTimers()`.
 */
export function useFakeClock(): void {
  vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
}

/** Resolves `work` on the fake clock: fires every timer due until none is left. */
export async function onFakeClock<T>(work: Promise<T>): Promise<T> {
  await vi.runAllTimersAsync();
  return work;
}
