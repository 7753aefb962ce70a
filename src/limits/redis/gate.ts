/**
 * The rate gate shared through Redis by every runner of one account (see
 * docs/limits.md, "Shared limits over Redis"): a sliding-window log per
 * bucket in Redis ZSETs, a fair queue of tickets between runners (weighted
 * by each runner's share, see scripts.ts), a shared 429
 * pause, and a conservative local fallback while Redis is unreachable.
 *
 * Each waiting `acquire` owns a ticket in Redis and runs the acquire script;
 * when it cannot go, the script says when enough slots expire for it, and the
 * waiter sleeps until then (plus jitter, at most `leaseMs / 4` so its ticket
 * stays alive). No busy polling: one script call per wake-up.
 */
import { randomUUID } from 'node:crypto';
import { BUCKETS, type Bucket, type RateLimits } from '../../contract/index.js';
import { clockTime, type Logger, type RateFeedback, silentLogger } from '../../shared/index.js';
import { GateClosedError } from '../errors.js';
import { feedbackBucket } from '../feedback-bucket.js';
import type { GateEventName, GateEvents, GateListener } from '../gate-events.js';
import { GateEmitter } from '../gate-events.js';
import type { GateSnapshot, RateGate } from '../local-gate.js';
import { createFallbackGate } from './fallback-gate.js';
import {
  type RedisGateOptions,
  type ResolvedRedisOptions,
  resolveRedisOptions,
} from './options.js';
import { PauseClock } from './pause-clock.js';
import { type LocalGrant, occupiedAtOutage, SlotMirror, slotsToUpload } from './slots.js';
import { type AcquireReply, RedisStore, type SlotLists } from './store.js';
import { InFlightGrants, sleepInterruptibly, type Waiter } from './waiter.js';

export type { FallbackEvent, RedisGateOptions } from './options.js';

/** Abort reason of local waits when Redis is back: the waiter retries on Redis. */
const BACK_TO_SHARED = Symbol('back to shared limits');

class RedisGate implements RateGate {
  readonly #limits: RateLimits;
  readonly #options: ResolvedRedisOptions;
  readonly #logger: Logger;
  readonly #store: RedisStore;
  readonly #runnerId = randomUUID();
  readonly #mirror = new SlotMirror();
  readonly #waiters = new Set<Waiter>();
  readonly #events = new GateEmitter();
  readonly #inFlight = new InFlightGrants();
  #sequence = 0;
  #mode: 'shared' | 'local' = 'shared';
  /** Shared admissions wait for this: the first connection, or an upload after an outage. */
  #barrier: Promise<void>;
  #fallback: RateGate | undefined;
  #localGrants: LocalGrant[] = [];
  #remnants: SlotLists | undefined;
  #leaving = false;
  #probe: NodeJS.Timeout | undefined;
  readonly #pause = new PauseClock(() => this.#events.emit('resume', { at: Date.now() }));
  #closed = false;

  constructor(limits: RateLimits, options: RedisGateOptions) {
    this.#limits = limits;
    this.#options = resolveRedisOptions(limits, options);
    this.#logger = options.logger ?? silentLogger();
    this.#store = new RedisStore({
      url: options.redisUrl,
      prefix: this.#options.prefix,
      limits,
      slotLifeMs: (bucket) => this.#life(bucket),
      leaseMs: this.#options.leaseMs,
      runner: this.#runnerId,
      share: this.#options.share,
      commandTimeoutMs: this.#options.commandTimeoutMs,
      onReady: () => void this.#tryLeaveFallback(),
      onError: (error) => this.#logger.debug({ err: error.message }, 'redis connection error'),
    });
    this.#barrier = this.#store.whenReady(this.#options.commandTimeoutMs * 3).then((ok) => {
      if (!ok) this.#enterFallback(new Error(`no answer from Redis at ${this.#options.where}`));
    });
  }

  #life(bucket: Bucket): number {
    const { windowMs } = this.#limits[bucket];
    return windowMs + this.#options.marginMs(windowMs);
  }

  get pausedUntil(): number | null {
    return this.#pause.until > Date.now() ? this.#pause.until : null;
  }

  on<E extends GateEventName>(event: E, listener: GateListener<E>): () => void {
    return this.#events.on(event, listener);
  }

  acquire(buckets: readonly Bucket[], signal?: AbortSignal): Promise<void> {
    if (this.#closed) return Promise.reject(new GateClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    const wanted = [...new Set(buckets)];
    if (wanted.length === 0) return Promise.resolve();
    const unknown = wanted.find((b) => !BUCKETS.includes(b));
    if (unknown !== undefined) return Promise.reject(new TypeError(`Unknown bucket "${unknown}"`));
    this.#sequence += 1;
    const waiter: Waiter = {
      ticket: `${this.#runnerId}:${this.#sequence}`,
      buckets: wanted,
      signal,
      enqueued: false,
      interrupt: undefined,
      local: undefined,
    };
    this.#waiters.add(waiter);
    return this.#serve(waiter);
  }

  #check(waiter: Waiter): void {
    if (this.#closed) throw new GateClosedError();
    if (waiter.signal?.aborted) throw waiter.signal.reason;
  }

  async #serve(waiter: Waiter): Promise<void> {
    let announced = false;
    try {
      for (;;) {
        this.#check(waiter);
        if (this.#mode === 'shared') await this.#barrier;
        this.#check(waiter);
        // Our own pause holds even before (or without) Redis knowing about it.
        if (this.#pause.until > Date.now()) {
          await sleepInterruptibly(
            waiter,
            this.#pause.until - Date.now() + Math.random() * this.#options.jitterMs,
          );
          continue;
        }
        if (this.#mode === 'local') {
          if (await this.#serveLocally(waiter)) return;
          continue;
        }
        let reply: AcquireReply;
        try {
          waiter.enqueued = true;
          const withSlots = this.#mirror.stale(Date.now(), this.#options.mirrorRefreshMs);
          reply = await this.#store.acquire(waiter.ticket, waiter.buckets, withSlots);
        } catch (error) {
          this.#enterFallback(error);
          continue;
        }
        this.#absorb(reply);
        if (reply.granted) {
          waiter.enqueued = false;
          // A reply with slots already lists this grant.
          if (!reply.slots) {
            for (const b of waiter.buckets) this.#mirror.addUsed(b, reply.at + this.#life(b));
          }
          this.#inFlight.add({ ticket: waiter.ticket, buckets: waiter.buckets, at: reply.at });
          this.#check(waiter);
          this.#events.emit('grant', { buckets: waiter.buckets, at: reply.at });
          return;
        }
        if (!announced) {
          announced = true;
          this.#events.emit('wait', {
            buckets: waiter.buckets,
            waiting: this.#waiters.size,
            pausedUntil: this.pausedUntil,
          });
        }
        const now = Date.now();
        const cap = now + this.#options.maxSleepMs;
        // wakeAt is 0 while paused; both 0 means the pause just ended: retry now.
        const wakeAt = Math.min(cap, Math.max(reply.wakeAt, this.#pause.until, now));
        await sleepInterruptibly(waiter, wakeAt - now + Math.random() * this.#options.jitterMs);
      }
    } finally {
      this.#waiters.delete(waiter);
      if (waiter.enqueued && !this.#closed && this.#mode === 'shared') {
        this.#store.cancel([waiter.ticket]).catch(() => {}); // its lease lapses anyway
      }
    }
  }

  /** Waits on the local fallback gate; false when Redis came back first. */
  async #serveLocally(waiter: Waiter): Promise<boolean> {
    const gate = this.#fallback;
    if (!gate || waiter.buckets.some((b) => this.#options.fallbackLimits[b].count === 0)) {
      // A bucket too small to split among peers waits for Redis (never overspend).
      await sleepInterruptibly(waiter, this.#options.probeMs);
      return false;
    }
    const controller = new AbortController();
    const onAbort = () => controller.abort(waiter.signal?.reason);
    waiter.signal?.addEventListener('abort', onAbort, { once: true });
    waiter.local = controller;
    try {
      await gate.acquire(waiter.buckets, controller.signal);
      return true;
    } catch (error) {
      if (error === BACK_TO_SHARED) return false;
      throw error;
    } finally {
      waiter.local = undefined;
      waiter.signal?.removeEventListener('abort', onAbort);
    }
  }

  #absorb(reply: AcquireReply): void {
    if (reply.slots) this.#mirror.replace(reply.slots, Date.now());
    if (reply.pausedUntil > 0) this.#pauseAll(reply.pausedUntil, 'rate_limited');
  }

  #enterFallback(error: unknown): void {
    if (this.#closed || this.#mode === 'local') return;
    this.#mode = 'local';
    const now = Date.now();
    const occupied = occupiedAtOutage(
      this.#mirror.occupied(now),
      this.#limits,
      (b) => this.#life(b),
      now,
    );
    this.#remnants ??= occupied;
    this.#fallback = createFallbackGate({
      options: this.#options,
      occupied,
      pausedUntil: this.#pause.until,
      slotLifeMs: (bucket) => this.#life(bucket),
      onGrant: (bucket, expiry) => {
        this.#localGrants.push({ bucket, expiry });
        this.#mirror.addUsed(bucket, expiry);
      },
      events: this.#events,
    });
    const reason = error instanceof Error ? error.message : String(error);
    // What the others may have spent is held as spent for a window: say how long that holds the first request.
    const firstFree = this.#fallback.snapshot().buckets.requests.nextFreeAt;
    const held =
      firstFree > now
        ? `; the first requests wait until ${clockTime(firstFree)}, what other runners may have spent in the last window`
        : '';
    this.#logger.warn(
      { store: this.#options.where, reason, peers: this.#options.peers, firstFreeAt: firstFree },
      `Redis at ${this.#options.where} is unreachable (${reason}): running on local limits (1/${this.#options.peers} of each bucket) until it answers${held}`,
    );
    this.#events.emit('store', { mode: 'local', reason });
    this.#options.onFallback?.({ mode: 'local', reason });
    for (const waiter of this.#waiters) waiter.interrupt?.();
    this.#probe = setInterval(() => void this.#tryLeaveFallback(), this.#options.probeMs);
    this.#probe.unref();
  }

  async #tryLeaveFallback(): Promise<void> {
    if (this.#mode !== 'local' || this.#leaving || this.#closed) return;
    this.#leaving = true;
    try {
      await this.#store.ping();
    } catch {
      this.#leaving = false;
      return;
    }
    if (this.#closed || this.#mode !== 'local') {
      this.#leaving = false;
      return;
    }
    // Switch before the upload resolves so no local grant can slip in between;
    // shared admissions wait for the upload (the barrier).
    const gate = this.#fallback;
    this.#mode = 'shared';
    this.#fallback = undefined;
    clearInterval(this.#probe);
    for (const waiter of this.#waiters) waiter.local?.abort(BACK_TO_SHARED);
    gate?.close();
    const upload = slotsToUpload({
      batch: randomUUID(),
      grants: this.#localGrants,
      remnants: this.#remnants,
      peers: this.#options.peers,
      peerAllowance: (bucket) => this.#options.fallbackLimits[bucket].count,
      slotLifeMs: (bucket) => this.#life(bucket),
      now: Date.now(),
    });
    this.#barrier = this.#store.upload(upload).then(
      () => {
        this.#leaving = false;
        this.#localGrants = [];
        this.#remnants = undefined;
        this.#logger.info(
          { store: this.#options.where },
          'Redis answers again: back on shared limits',
        );
        this.#events.emit('store', { mode: 'shared' });
        this.#options.onFallback?.({ mode: 'shared' });
      },
      (error: unknown) => {
        this.#leaving = false;
        this.#enterFallback(error);
      },
    );
  }

  feedback(feedback: RateFeedback): void {
    if (this.#closed) return;
    this.#restamp(feedback);
    if (this.#mode === 'local') this.#fallback?.feedback(feedback);
    if (feedback.status === 429) {
      const retryAfterMs = feedback.retryAfterMs ?? this.#options.defaultRetryAfterMs;
      this.#pauseAll(Date.now() + retryAfterMs, 'rate_limited', retryAfterMs);
      if (this.#mode === 'shared') {
        this.#store
          .pause({ afterMs: retryAfterMs })
          .then((until) => this.#pauseAll(until, 'rate_limited'))
          .catch((error: unknown) => this.#enterFallback(error));
      }
    }
    if (feedback.remaining !== undefined && this.#mode === 'shared') this.#shrink(feedback);
  }

  /**
   * A response proves its request has arrived: re-stamp the oldest in-flight
   * grant with the same buckets from now, so a request delayed past the
   * margin (a busy box, a slow network) still cannot overlap the service's
   * window. A 429 was not counted by the service: its slot just ages out.
   */
  #restamp(feedback: RateFeedback): void {
    const maxAge = Math.max(...BUCKETS.map((b) => this.#life(b)));
    const grant = this.#inFlight.take(feedback.buckets, Date.now(), maxAge);
    if (!grant || feedback.status === 429 || this.#mode !== 'shared') return;
    this.#store
      .extend(grant.ticket, grant.buckets)
      .catch((error: unknown) => this.#enterFallback(error));
  }

  /** Adds shared phantoms when the service has fewer slots left than Redis shows. */
  #shrink(feedback: RateFeedback): void {
    const bucket = feedbackBucket(feedback, this.#limits);
    const remaining = Math.max(0, feedback.remaining!);
    // Our picture is a little stale, so only ask Redis when it suggests a shortfall.
    if (this.#mirror.free(bucket, this.#limits, Date.now()) <= remaining) return;
    this.#sequence += 1;
    this.#store
      .shrink(bucket, remaining, `p:${this.#runnerId}:${this.#sequence}:`)
      .then(({ added, phantoms }) => {
        if (added > 0) this.#events.emit('shrink', { bucket, phantoms, remaining });
      })
      .catch((error: unknown) => this.#enterFallback(error));
  }

  /** Redis holds every runner's slots, a killed one's included: nothing to add. */
  occupy(bucket: Bucket, expiries: readonly number[]): void {
    this.#fallback?.occupy(bucket, expiries);
  }

  pauseUntil(epochMs: number): void {
    if (this.#closed) return;
    this.#pauseAll(epochMs, 'restored');
    if (this.#mode === 'shared' && epochMs > Date.now()) {
      this.#store.pause({ at: epochMs }).catch((error: unknown) => this.#enterFallback(error));
    }
  }

  #pauseAll(until: number, reason: GateEvents['pause']['reason'], retryAfterMs?: number): void {
    if (!this.#pause.extend(until)) return;
    this.#fallback?.pauseUntil(until);
    this.#events.emit('pause', {
      until,
      reason,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }

  /** From the last picture of Redis (at most `mirrorRefreshMs` old plus our grants), or the fallback's view. */
  snapshot(): GateSnapshot {
    const view = this.#fallback?.snapshot() ?? this.#mirror.gateSnapshot(this.#limits, Date.now());
    return { ...view, pausedUntil: this.pausedUntil, waiting: this.#waiters.size };
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#probe);
    this.#pause.close();
    const tickets = [...this.#waiters].filter((w) => w.enqueued).map((w) => w.ticket);
    for (const waiter of this.#waiters) waiter.interrupt?.();
    this.#fallback?.close();
    this.#fallback = undefined;
    this.#events.clear();
    // Free our place in the shared queue for the others, then hang up (bounded by the command timeout).
    const cancel =
      this.#mode === 'shared' && tickets.length > 0
        ? this.#store.cancel(tickets)
        : Promise.resolve();
    cancel.catch(() => {}).finally(() => this.#store.close());
  }
}

/**
 * Creates a gate whose four buckets are shared, through the Redis at
 * `options.redisUrl`, by every runner using the same `accountKey`.
 */
export function createRedisGate(limits: RateLimits, options: RedisGateOptions): RateGate {
  return new RedisGate(limits, options);
}
