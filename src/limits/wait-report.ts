/**
 * Wraps a gate so a long wait at it is never silent (shared/waits.ts): while
 * requests wait and the log has been quiet, one line says how many wait and
 * for what (a pause after a 429, which bucket is full and until when). One
 * line for all waiters, not one per request. And no wait is endless: one
 * longer than the longest Retry-After ibatch waits out plus the longest
 * window ends with RateWaitTooLongError (a shared gate whose peers never
 * free a slot, a bucket too small to split while Redis is away).
 */
import { type Bucket, LONGEST_RETRY_AFTER_MS, type RateLimits } from '../contract/index.js';
import { clockTime, type Logger, logIsQuiet, noteLogLine, WAIT_CHECK_MS } from '../shared/index.js';
import { RateWaitTooLongError } from './errors.js';
import type { RateGate } from './local-gate.js';

interface Waiting {
  readonly since: number;
  readonly buckets: readonly Bucket[];
  readonly limit: AbortController;
}

/** The longest a request may wait at the gate: a pause at the ceiling, then a full window. */
export function longestGateWaitMs(limits: RateLimits): number {
  return LONGEST_RETRY_AFTER_MS + Math.max(...Object.values(limits).map((w) => w.windowMs));
}

export function reportLongWaits(gate: RateGate, logger: Logger, limits: RateLimits): RateGate {
  const waiting = new Map<number, Waiting>();
  const longest = longestGateWaitMs(limits);
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  const report = () => {
    const now = Date.now();
    for (const w of waiting.values()) {
      if (now - w.since > longest)
        w.limit.abort(new RateWaitTooLongError(w.buckets, now - w.since));
    }
    if (!logIsQuiet(now)) return;
    const oldest = Math.min(...[...waiting.values()].map((w) => w.since));
    const view = gate.snapshot();
    const wanted = new Set([...waiting.values()].flatMap((w) => w.buckets));
    const full = [...wanted]
      .filter((b) => view.buckets[b].available <= 0)
      .map((b) => `${b} full until ${clockTime(view.buckets[b].nextFreeAt)}`);
    const why = [
      ...(view.pausedUntil ? [`paused by the service until ${clockTime(view.pausedUntil)}`] : []),
      ...full,
    ];
    logger.info(
      { waiting: waiting.size, waitedMs: now - oldest, pausedUntil: view.pausedUntil },
      `waiting for the rate limits: ${waiting.size} request(s), the oldest for ${Math.round((now - oldest) / 1000)} s${why.length > 0 ? ` (${why.join(', ')})` : ''}`,
    );
    // A logger of the library's caller does not tell waits.ts: count this line here.
    noteLogLine();
  };
  const done = (id: number) => {
    waiting.delete(id);
    if (waiting.size === 0 && timer) {
      clearInterval(timer);
      timer = undefined;
    }
  };
  return {
    acquire(buckets, signal) {
      if (signal?.aborted) return Promise.reject(signal.reason);
      const id = next++;
      const limit = new AbortController();
      const forward = () => limit.abort(signal?.reason);
      signal?.addEventListener('abort', forward, { once: true });
      waiting.set(id, { since: Date.now(), buckets, limit });
      if (!timer) {
        timer = setInterval(report, WAIT_CHECK_MS);
        timer.unref();
      }
      return gate.acquire(buckets, limit.signal).finally(() => {
        signal?.removeEventListener('abort', forward);
        done(id);
      });
    },
    feedback: (feedback) => gate.feedback(feedback),
    on: (event, listener) => gate.on(event, listener),
    get pausedUntil() {
      return gate.pausedUntil;
    },
    pauseUntil: (epochMs) => gate.pauseUntil(epochMs),
    occupy: (bucket, expiries) => gate.occupy(bucket, expiries),
    snapshot: () => gate.snapshot(),
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      gate.close();
    },
  };
}
