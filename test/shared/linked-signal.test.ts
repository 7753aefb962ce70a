/**
 * The one signal combiner (src/shared/linked-signal.ts): it aborts as its
 * sources do, and once released a long-lived source holds nothing of it —
 * neither a listener nor a reference — however many times it was linked.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it, vi } from 'vitest';
import { linkSignals } from '../../src/shared/index.js';
import { entriesHeldBy } from '../helpers/index.js';

describe('linkSignals', () => {
  it('leaves nothing on a long-lived source linked 10,000 times', () => {
    const run = new AbortController();
    const held = entriesHeldBy(run.signal);
    for (let i = 0; i < 10_000; i++) {
      const linked = linkSignals([run.signal, new AbortController().signal]);
      linked.release();
    }
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
    expect(entriesHeldBy(run.signal)).toBe(held);
  });

  it('shows what AbortSignal.any leaves on the same source (the leak it replaces)', () => {
    const run = new AbortController();
    for (let i = 0; i < 100; i++) AbortSignal.any([run.signal, new AbortController().signal]);
    expect(entriesHeldBy(run.signal)).toBeGreaterThanOrEqual(100);
  });

  it('aborts with the reason of whichever source aborts, and then lets go of the others', () => {
    const run = new AbortController();
    const call = new AbortController();
    const linked = linkSignals([run.signal, call.signal]);
    const reason = new Error('stopped');
    call.abort(reason);
    expect(linked.signal?.aborted).toBe(true);
    expect(linked.signal?.reason).toBe(reason);
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  });

  it('is the source itself when there is one, and undefined when there is none', () => {
    const run = new AbortController();
    expect(linkSignals([run.signal, undefined]).signal).toBe(run.signal);
    expect(linkSignals([undefined, undefined]).signal).toBeUndefined();
  });

  it('starts aborted when a source already is', () => {
    const reason = new Error('already');
    const linked = linkSignals([new AbortController().signal, AbortSignal.abort(reason)]);
    expect(linked.signal?.reason).toBe(reason);
  });

  it('times out with a TimeoutError, and not after release', () => {
    vi.useFakeTimers();
    try {
      const timed = linkSignals([undefined], { timeoutMs: 5 });
      const released = linkSignals([new AbortController().signal], { timeoutMs: 5 });
      released.release();
      vi.advanceTimersByTime(4);
      expect(timed.signal.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect((timed.signal.reason as Error).name).toBe('TimeoutError');
      expect(released.signal.aborted).toBe(false);
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
