/**
 * The in-process rate gate: one sliding-window log per bucket (see
 * sliding-window-log.ts and docs/limits.md for why not bottleneck's
 * reservoir or p-queue's interval).
 *
 * - `acquire(buckets)` waits until EVERY listed bucket has a free slot, then
 *   takes them all at once, stamped at grant time (= send time). It never
 *   holds one bucket while waiting for another.
 * - Waiters are served in FIFO order without head-of-line blocking: a waiter
 *   that cannot go yet claims one slot in each of its buckets, so later
 *   waiters may only use capacity beyond those claims. A poll (requests only)
 *   therefore overtakes a create stuck on the generations bucket, but never
 *   takes the requests slot that create will need when generations frees up.
 * - A 429 pauses every bucket until its Retry-After elapses (the later of
 *   overlapping pauses wins). `pauseUntil` restores a persisted pause.
 * - `X-RateLimit-Remaining` below our own view adds phantom slots.
 * - Only one timer exists, armed for the next instant anything can change;
 *   it is ref'd only while someone waits (a waiter is real pending work).
 */
import { BUCKETS, type Bucket, type RateLimits } from '../contract/index.js';
import { type RateFeedback, type RequestGate, timerStep } from '../shared/index.js';
import { GateClosedError } from './errors.js';
import {
  GateEmitter,
  type GateEventName,
  type GateEvents,
  type GateListener,
} from './gate-events.js';
import { SlidingWindowLog } from './sliding-window-log.js';

/**
 * Extra life of each slot beyond its window, against network jitter: the
 * larger of 25 ms and 1% of the window.
 */
export function defaultSlotMarginMs(windowMs: number): number {
  return Math.max(25, windowMs * 0.01);
}

/** The defaults of {@link LocalGateOptions}, written once; the Redis gate falls back to the same. */
export const LOCAL_GATE_DEFAULTS = {
  marginMs: defaultSlotMarginMs,
  defaultRetryAfterMs: 1000,
} as const;

export interface LocalGateOptions {
  /**
   * Extra life of each slot beyond the window, against network jitter.
   * @default defaultSlotMarginMs
   */
  readonly marginMs?: (windowMs: number) => number;
  /** Pause after a 429 that carried no Retry-After. @default 1000 */
  readonly defaultRetryAfterMs?: number;
  /** Clock in ms since the epoch. @default Date.now */
  readonly now?: () => number;
  /**
   * Expiry times of slots already taken elsewhere (e.g. by other runners,
   * seen in Redis before it went away), held as phantom slots.
   * @default none
   */
  readonly occupied?: Partial<Record<Bucket, readonly number[]>>;
}

export interface BucketSnapshot {
  readonly limit: number;
  readonly windowMs: number;
  /** Our slots in the current window ("rate in use"). */
  readonly used: number;
  /** Slots attributed to other users of the account. */
  readonly phantom: number;
  readonly available: number;
  /** When the next slot frees up (ms epoch), or now if one is available. */
  readonly nextFreeAt: number;
}

export interface GateSnapshot {
  readonly at: number;
  readonly pausedUntil: number | null;
  readonly waiting: number;
  readonly buckets: Readonly<Record<Bucket, BucketSnapshot>>;
}

/** A `RequestGate` with the controls and views the run engine needs. */
export interface RateGate extends RequestGate {
  on<E extends GateEventName>(event: E, listener: GateListener<E>): () => void;
  /** The end of the current pause (ms epoch), or null when not paused. */
  readonly pausedUntil: number | null;
  /** Pauses every bucket until `epochMs` (keeps a later existing pause). */
  pauseUntil(epochMs: number): void;
  /**
   * Marks slots of `bucket` as taken until each `expiry` (ms epoch): what an
   * earlier process of this runner spent before it was killed. A Redis gate
   * already knows its peers' slots and may ignore this.
   */
  occupy(bucket: Bucket, expiries: readonly number[]): void;
  snapshot(): GateSnapshot;
  /** Clears the timer and rejects every waiter with `GateClosedError`. */
  close(): void;
}

interface Waiter {
  readonly buckets: readonly Bucket[];
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
  readonly cleanup: () => void;
}

class LocalGate implements RateGate {
  readonly #logs: Record<Bucket, SlidingWindowLog>;
  readonly #limits: RateLimits;
  readonly #now: () => number;
  readonly #defaultRetryAfterMs: number;
  readonly #waiters: Waiter[] = [];
  readonly #events = new GateEmitter();
  #pausedUntil = 0;
  #pauseAnnounced = false;
  #timer: NodeJS.Timeout | undefined;
  #timerAt = Number.POSITIVE_INFINITY;
  #closed = false;

  constructor(limits: RateLimits, options: LocalGateOptions) {
    const margin = options.marginMs ?? LOCAL_GATE_DEFAULTS.marginMs;
    this.#limits = limits;
    this.#now = options.now ?? Date.now;
    this.#defaultRetryAfterMs =
      options.defaultRetryAfterMs ?? LOCAL_GATE_DEFAULTS.defaultRetryAfterMs;
    const logs = {} as Record<Bucket, SlidingWindowLog>;
    for (const bucket of BUCKETS) {
      const { count, windowMs } = limits[bucket];
      logs[bucket] = new SlidingWindowLog(count, windowMs, margin(windowMs));
      for (const expiry of options.occupied?.[bucket] ?? []) logs[bucket].addPhantomUntil(expiry);
    }
    this.#logs = logs;
  }

  get pausedUntil(): number | null {
    return this.#pausedUntil > this.#now() ? this.#pausedUntil : null;
  }

  on<E extends GateEventName>(event: E, listener: GateListener<E>): () => void {
    return this.#events.on(event, listener);
  }

  #emit<E extends GateEventName>(event: E, payload: GateEvents[E]): void {
    this.#events.emit(event, payload);
  }

  acquire(buckets: readonly Bucket[], signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(new GateClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    const wanted = [...new Set(buckets)];
    if (wanted.length === 0) return Promise.resolve();
    for (const bucket of wanted) {
      if (!(bucket in this.#logs)) {
        return Promise.reject(
          new TypeError(`Expected a bucket of ${BUCKETS.join(', ')}, got "${bucket}"`),
        );
      }
    }
    const now = this.#now();
    if (this.#waiters.length === 0 && now >= this.#pausedUntil && this.#fits(wanted, now)) {
      this.#take(wanted, now);
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter);
        if (index >= 0) this.#waiters.splice(index, 1);
        reject(signal!.reason);
        this.#drain(); // its claims are gone: later waiters may fit now
      };
      const waiter: Waiter = {
        buckets: wanted,
        resolve,
        reject,
        cleanup: () => signal?.removeEventListener('abort', onAbort),
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#emit('wait', {
        buckets: wanted,
        waiting: this.#waiters.length,
        pausedUntil: this.pausedUntil,
      });
      this.#drain();
    });
  }

  #fits(buckets: readonly Bucket[], now: number, claims?: Map<Bucket, number>): boolean {
    return buckets.every((b) => this.#logs[b].free(now) - (claims?.get(b) ?? 0) >= 1);
  }

  #take(buckets: readonly Bucket[], now: number): void {
    for (const bucket of buckets) this.#logs[bucket].take(now);
    this.#emit('grant', { buckets, at: now });
  }

  /** Grants every waiter that can go now, in order, then arms the timer. */
  #drain(): void {
    if (this.#closed) return;
    const now = this.#now();
    if (now < this.#pausedUntil) {
      this.#arm(this.#pausedUntil);
      return;
    }
    if (this.#pauseAnnounced) {
      this.#pauseAnnounced = false;
      this.#emit('resume', { at: now });
    }
    const claims = new Map<Bucket, number>();
    for (let i = 0; i < this.#waiters.length; ) {
      const waiter = this.#waiters[i]!;
      if (this.#fits(waiter.buckets, now, claims)) {
        this.#take(waiter.buckets, now);
        this.#waiters.splice(i, 1);
        waiter.cleanup();
        waiter.resolve();
        continue;
      }
      for (const bucket of waiter.buckets) claims.set(bucket, (claims.get(bucket) ?? 0) + 1);
      i += 1;
    }
    // Something changes when a contended bucket's oldest slot expires.
    let next = Number.POSITIVE_INFINITY;
    for (const [bucket, claimed] of claims) {
      const log = this.#logs[bucket];
      if (log.free(now) < claimed) next = Math.min(next, log.freeAt(now, log.free(now) + 1));
    }
    this.#arm(next);
  }

  #arm(at: number): void {
    if (at === this.#timerAt && this.#timer) {
      if (this.#waiters.length > 0) this.#timer.ref();
      return;
    }
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerAt = at;
    if (!Number.isFinite(at)) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        this.#timerAt = Number.POSITIVE_INFINITY;
        this.#drain();
      },
      // A step, not the whole wait: a longer timer overflows to 1 ms. Firing
      // early is harmless, `#drain` re-arms for what is still ahead.
      timerStep(at - this.#now()),
    );
    // With nobody waiting the timer only announces a resume: do not hold the process.
    if (this.#waiters.length === 0) this.#timer.unref();
  }

  feedback(feedback: RateFeedback): void {
    if (this.#closed) return;
    const now = this.#now();
    // Every answered request: its slot lives a window past the answer (see `confirm`).
    for (const bucket of new Set(feedback.buckets)) this.#logs[bucket]?.confirm(now);
    if (feedback.status === 429) {
      const retryAfterMs = feedback.retryAfterMs ?? this.#defaultRetryAfterMs;
      this.#pause(now + retryAfterMs, 'rate_limited', retryAfterMs);
    }
    if (feedback.remaining !== undefined) this.#shrink(feedback, now);
  }

  /**
   * If the service has fewer slots left than we think we have, someone else
   * uses the account: add phantom slots so our free count matches its view.
   */
  #shrink(feedback: RateFeedback, now: number): void {
    const bucket = this.#feedbackBucket(feedback);
    const log = this.#logs[bucket];
    const excess = log.free(now) - Math.max(0, feedback.remaining!);
    if (excess <= 0) return;
    log.addPhantoms(now, excess);
    this.#emit('shrink', { bucket, phantoms: log.phantoms(now), remaining: feedback.remaining! });
  }

  /**
   * The reference does not say which bucket the X-RateLimit headers describe.
   * We read them as the bucket among the request's buckets whose limit equals
   * `X-RateLimit-Limit`, else the account-wide `requests` bucket.
   */
  #feedbackBucket(feedback: RateFeedback): Bucket {
    if (feedback.limit !== undefined && feedback.limit !== this.#limits.requests.count) {
      const match = feedback.buckets.find(
        (b) => b !== 'requests' && this.#limits[b].count === feedback.limit,
      );
      if (match) return match;
    }
    return 'requests';
  }

  pauseUntil(epochMs: number): void {
    if (this.#closed) return;
    this.#pause(epochMs, 'restored');
  }

  occupy(bucket: Bucket, expiries: readonly number[]): void {
    const now = this.#now();
    for (const expiry of expiries) if (expiry > now) this.#logs[bucket].addPhantomUntil(expiry);
  }

  #pause(until: number, reason: GateEvents['pause']['reason'], retryAfterMs?: number): void {
    if (until <= this.#pausedUntil || until <= this.#now()) return;
    this.#pausedUntil = until;
    this.#pauseAnnounced = true;
    this.#emit('pause', { until, reason, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
    this.#arm(until);
  }

  snapshot(): GateSnapshot {
    const now = this.#now();
    const buckets = {} as Record<Bucket, BucketSnapshot>;
    for (const bucket of BUCKETS) {
      const log = this.#logs[bucket];
      buckets[bucket] = {
        limit: log.count,
        windowMs: log.windowMs,
        used: log.used(now),
        phantom: log.phantoms(now),
        available: log.free(now),
        nextFreeAt: log.freeAt(now, 1),
      };
    }
    return { at: now, pausedUntil: this.pausedUntil, waiting: this.#waiters.length, buckets };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const error = new GateClosedError();
    for (const waiter of this.#waiters.splice(0)) {
      waiter.cleanup();
      waiter.reject(error);
    }
    this.#events.clear();
  }
}

/** Creates an in-process gate enforcing `limits` (from `parseLimitsSpec`). */
export function createLocalGate(limits: RateLimits, options: LocalGateOptions = {}): RateGate {
  return new LocalGate(limits, options);
}
