/**
 * Per-account rate limits of the four buckets. The default algorithm is a
 * sliding window log (the strictest reading of "N per minute"); `fixed`
 * counts per calendar window instead. A rejected (429) request is not
 * counted. Whatever the algorithm, every bucket also tracks the largest
 * count seen in any sliding window of its length, so tests can assert that
 * a client never exceeded a limit.
 */
import { BUCKETS, type Bucket, type RateWindow } from '../contract/index.js';

class BucketLog {
  /** Accepted request times inside the last window, oldest first (ring via head index). */
  private times: number[] = [];
  private head = 0;
  private fixedStart = -1;
  private fixedCount = 0;
  total = 0;
  rejected = 0;
  maxInAnyWindow = 0;

  constructor(readonly window: RateWindow) {}

  private prune(now: number): void {
    const from = now - this.window.windowMs;
    while (this.head < this.times.length && (this.times[this.head] ?? 0) <= from) this.head++;
    if (this.head > 1024 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  inWindow(now: number): number {
    this.prune(now);
    return this.times.length - this.head;
  }

  /** ms until one more request would be allowed; 0 when allowed now. */
  waitMs(now: number, algorithm: 'sliding' | 'fixed'): number {
    if (algorithm === 'fixed') {
      const start = now - (now % this.window.windowMs);
      const count = start === this.fixedStart ? this.fixedCount : 0;
      return count < this.window.count ? 0 : start + this.window.windowMs - now;
    }
    const count = this.inWindow(now);
    if (count < this.window.count) return 0;
    const oldestThatMustExpire = this.times[this.head + count - this.window.count] ?? now;
    return Math.max(1, oldestThatMustExpire + this.window.windowMs - now);
  }

  remaining(now: number, algorithm: 'sliding' | 'fixed'): number {
    if (algorithm === 'fixed') {
      const start = now - (now % this.window.windowMs);
      return Math.max(0, this.window.count - (start === this.fixedStart ? this.fixedCount : 0));
    }
    return Math.max(0, this.window.count - this.inWindow(now));
  }

  accept(now: number): void {
    this.times.push(now);
    this.total++;
    const start = now - (now % this.window.windowMs);
    if (start !== this.fixedStart) {
      this.fixedStart = start;
      this.fixedCount = 0;
    }
    this.fixedCount++;
    this.maxInAnyWindow = Math.max(this.maxInAnyWindow, this.inWindow(now));
  }

  snapshot(now: number) {
    return {
      limit: this.window.count,
      windowMs: this.window.windowMs,
      inWindow: this.inWindow(now),
      maxInAnyWindow: this.maxInAnyWindow,
      total: this.total,
      rejected: this.rejected,
      recent: this.times.slice(this.head).map((t) => new Date(t).toISOString()),
    };
  }
}

export type BucketSnapshot = ReturnType<BucketLog['snapshot']>;

export interface RateDecision {
  allowed: boolean;
  /** Wait in ms until the blocking bucket frees a slot (when not allowed). */
  waitMs: number;
  blockedBy?: Bucket;
}

export class RateLimiter {
  private readonly logs = new Map<string, Record<Bucket, BucketLog>>();

  constructor(
    private readonly windows: Record<Bucket, RateWindow>,
    private readonly algorithm: () => 'sliding' | 'fixed',
  ) {}

  private account(accountId: string): Record<Bucket, BucketLog> {
    let logs = this.logs.get(accountId);
    if (!logs) {
      logs = Object.fromEntries(BUCKETS.map((b) => [b, new BucketLog(this.windows[b])])) as Record<
        Bucket,
        BucketLog
      >;
      this.logs.set(accountId, logs);
    }
    return logs;
  }

  /** Checks every bucket; counts the request in all of them only when all allow it. */
  take(accountId: string, buckets: readonly Bucket[], now: number): RateDecision {
    const logs = this.account(accountId);
    const algorithm = this.algorithm();
    let worst: RateDecision = { allowed: true, waitMs: 0 };
    for (const bucket of buckets) {
      const wait = logs[bucket].waitMs(now, algorithm);
      if (wait > worst.waitMs) worst = { allowed: false, waitMs: wait, blockedBy: bucket };
    }
    if (!worst.allowed) {
      if (worst.blockedBy) logs[worst.blockedBy].rejected++;
      return worst;
    }
    for (const bucket of buckets) logs[bucket].accept(now);
    return worst;
  }

  /** `X-RateLimit-*` values of the `requests` bucket. */
  headers(accountId: string, now: number): { limit: number; remaining: number } {
    const log = this.account(accountId).requests;
    return { limit: log.window.count, remaining: log.remaining(now, this.algorithm()) };
  }

  snapshot(accountId: string, now: number): Record<Bucket, BucketSnapshot> {
    const logs = this.account(accountId);
    return Object.fromEntries(BUCKETS.map((b) => [b, logs[b].snapshot(now)])) as Record<
      Bucket,
      BucketSnapshot
    >;
  }

  reset(): void {
    this.logs.clear();
  }
}
