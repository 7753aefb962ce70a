/**
 * Pieces of the Redis gate that hold no Redis state: a waiting acquire and
 * its interruptible sleep, and the grants still waiting for their response
 * (to re-stamp). The event emitter lives in ../gate-events.ts.
 */
import type { Bucket } from '../../contract/index.js';
import { linkSignals, sleep } from '../../shared/index.js';

export interface Waiter {
  readonly ticket: string;
  readonly buckets: readonly Bucket[];
  readonly signal: AbortSignal | undefined;
  /** The ticket may be queued in Redis. */
  enqueued: boolean;
  /** Ends the current sleep early (close, abort, mode change). */
  interrupt: (() => void) | undefined;
  /** The current wait on the local fallback gate. */
  local: AbortController | undefined;
}

/**
 * Sleeps `ms`, or less if the waiter is interrupted or aborted; never
 * rejects: the caller's loop looks at why it woke.
 */
export async function sleepInterruptibly(waiter: Waiter, ms: number): Promise<void> {
  const interrupted = new AbortController();
  waiter.interrupt = () => interrupted.abort();
  const linked = linkSignals([waiter.signal, interrupted.signal]);
  try {
    await sleep(Math.max(0, ms), linked.signal);
  } catch {
    // Interrupted or aborted: waking early is the point.
  } finally {
    linked.release();
    waiter.interrupt = undefined;
  }
}

interface InFlight {
  readonly ticket: string;
  readonly buckets: readonly Bucket[];
  readonly at: number;
}

/** Our shared grants whose response has not come yet, oldest first. */
export class InFlightGrants {
  #grants: InFlight[] = [];

  add(grant: InFlight): void {
    this.#grants.push(grant);
  }

  /**
   * Removes and returns the oldest grant with exactly `buckets`; grants older
   * than `maxAgeMs` (their request was abandoned) are dropped on the way.
   */
  take(buckets: readonly Bucket[], now: number, maxAgeMs: number): InFlight | undefined {
    this.#grants = this.#grants.filter((g) => now - g.at < maxAgeMs);
    const wanted = new Set(buckets);
    const index = this.#grants.findIndex(
      (g) => g.buckets.length === wanted.size && g.buckets.every((b) => wanted.has(b)),
    );
    return index < 0 ? undefined : this.#grants.splice(index, 1)[0];
  }
}
