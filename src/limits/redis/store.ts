/**
 * The Redis gate's connection to Redis: one ioredis client, the scripts,
 * typed replies, and the offset between the Redis server's clock and ours
 * (every time the Redis gate shows or sleeps on is converted with it).
 *
 * Commands fail fast while the connection is down (no offline queue, no
 * per-request retries) so the gate can fall back to local limits at once;
 * ioredis keeps reconnecting in the background and `onReady` fires when the
 * server answers again. `defineCommand` re-sends a script's body after a
 * NOSCRIPT (a restarted server), unlike bottleneck's clustering (#118).
 */
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import { BUCKETS, type Bucket, type RateLimits } from '../../contract/index.js';
import {
  ACQUIRE_SCRIPT,
  accountKeys,
  bucketMask,
  CANCEL_SCRIPT,
  EXTEND_SCRIPT,
  PAUSE_SCRIPT,
  SHRINK_SCRIPT,
} from './scripts.js';

/** Live slot expiries per bucket, on OUR clock, ascending. */
export type SlotLists = Record<Bucket, number[]>;

export interface AcquireReply {
  readonly granted: boolean;
  /** Our clock's estimate of the server's grant/decision time. */
  readonly at: number;
  /** End of the shared pause on our clock (0 when none). */
  readonly pausedUntil: number;
  /** Earliest time enough slots can be free for this ticket, our clock (0 when granted/paused). */
  readonly wakeAt: number;
  /** Present when asked for: every live slot of the account. */
  readonly slots?: { readonly used: SlotLists; readonly phantom: SlotLists };
}

/** Slots to write back after running on local limits (expiries on our clock). */
export interface SlotUpload {
  readonly used: ReadonlyArray<{ bucket: Bucket; expiry: number; member: string }>;
  readonly phantom: ReadonlyArray<{ bucket: Bucket; expiry: number; member: string }>;
}

type Reply = [number, number, number, number, ...string[][]];

interface ScriptCommands {
  ibatchAcquire(...args: Array<string | number>): Promise<Reply>;
  ibatchCancel(...args: Array<string | number>): Promise<number>;
  ibatchExtend(...args: Array<string | number>): Promise<number>;
  ibatchPause(...args: Array<string | number>): Promise<[number, number]>;
  ibatchShrink(...args: Array<string | number>): Promise<[number, number, number]>;
}

export interface RedisStoreOptions {
  readonly url: string;
  /** Ends with the account's hash tag, e.g. "ibatch:v2:{3fa2...}:" */
  readonly prefix: string;
  readonly limits: RateLimits;
  readonly slotLifeMs: (bucket: Bucket) => number;
  readonly leaseMs: number;
  /** This runner's id in the fair queue (its tickets start with it). */
  readonly runner: string;
  /** This runner's weight in the fair queue. */
  readonly share: number;
  readonly commandTimeoutMs: number;
  readonly onReady: () => void;
  readonly onError: (error: Error) => void;
}

/** Loaded on first use, not at startup: commands without Redis should not carry ioredis's memory. */
let RedisClient: typeof Redis | undefined;
const redisClient = (): typeof Redis =>
  (RedisClient ??= (createRequire(import.meta.url)('ioredis') as { Redis: typeof Redis }).Redis);

export class RedisStore {
  readonly #redis: Redis;
  readonly #scripts: ScriptCommands;
  readonly #keys: string[];
  readonly #options: RedisStoreOptions;
  /** server ms - our ms (see #learnOffset). */
  #offset = 0;
  #bestRtt = Number.POSITIVE_INFINITY;
  #bestAt = 0;

  constructor(options: RedisStoreOptions) {
    this.#options = options;
    this.#keys = accountKeys(options.prefix);
    this.#redis = new (redisClient())(options.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      connectTimeout: options.commandTimeoutMs,
      commandTimeout: options.commandTimeoutMs,
      // Keep trying forever, at most once a second: the gate runs locally meanwhile.
      retryStrategy: (times) => Math.min(50 * 2 ** times, 1000),
      lazyConnect: false,
    });
    this.#redis.on('ready', options.onReady);
    this.#redis.on('error', options.onError);
    this.#redis.defineCommand('ibatchAcquire', { numberOfKeys: 19, lua: ACQUIRE_SCRIPT });
    this.#redis.defineCommand('ibatchCancel', { numberOfKeys: 3, lua: CANCEL_SCRIPT });
    this.#redis.defineCommand('ibatchExtend', { lua: EXTEND_SCRIPT });
    this.#redis.defineCommand('ibatchPause', { numberOfKeys: 1, lua: PAUSE_SCRIPT });
    this.#redis.defineCommand('ibatchShrink', { numberOfKeys: 2, lua: SHRINK_SCRIPT });
    this.#scripts = this.#redis as unknown as ScriptCommands;
  }

  get ready(): boolean {
    return this.#redis.status === 'ready';
  }

  /** Resolves true once connected, false after `timeoutMs` or when closed. */
  whenReady(timeoutMs: number): Promise<boolean> {
    if (this.ready) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.#redis.off('ready', onReady);
        this.#redis.off('end', onEnd);
        resolve(ok);
      };
      const onReady = () => done(true);
      const onEnd = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.#redis.on('ready', onReady);
      this.#redis.on('end', onEnd);
    });
  }

  /** Converts a server time to our clock. */
  toLocal(serverMs: number): number {
    return serverMs === 0 ? 0 : serverMs - this.#offset;
  }

  /**
   * NTP-style: trust the sample with the shortest round trip (its midpoint
   * error is at most half of it), refreshed after a minute against drift. A
   * busy event loop makes most round trips long and lopsided.
   */
  #learnOffset(serverNow: number, sentAt: number): void {
    const receivedAt = Date.now();
    const rtt = receivedAt - sentAt;
    if (rtt <= this.#bestRtt || receivedAt - this.#bestAt > 60_000) {
      this.#bestRtt = rtt;
      this.#bestAt = receivedAt;
      this.#offset = serverNow - (sentAt + receivedAt) / 2;
    }
  }

  async acquire(
    ticket: string,
    buckets: readonly Bucket[],
    withSlots: boolean,
  ): Promise<AcquireReply> {
    const limits = BUCKETS.flatMap((b) => [
      this.#options.limits[b].count,
      this.#options.slotLifeMs(b),
    ]);
    const sentAt = Date.now();
    const reply = await this.#scripts.ibatchAcquire(
      ...this.#keys,
      ticket,
      bucketMask(buckets),
      this.#options.leaseMs,
      withSlots ? '1' : '0',
      ...limits,
      this.#options.runner,
      this.#options.share,
    );
    const [granted, now, pause, wakeAt, ...lists] = reply;
    this.#learnOffset(Number(now), sentAt);
    const toSlots = (from: number): SlotLists => {
      const slots = {} as SlotLists;
      BUCKETS.forEach((bucket, i) => {
        slots[bucket] = (lists[from + i] ?? []).map((s) => this.toLocal(Number(s)));
      });
      return slots;
    };
    return {
      granted: Number(granted) === 1,
      at: this.toLocal(Number(now)),
      pausedUntil: Number(pause) > Number(now) ? this.toLocal(Number(pause)) : 0,
      wakeAt: this.toLocal(Number(wakeAt)),
      ...(withSlots ? { slots: { used: toSlots(0), phantom: toSlots(4) } } : {}),
    };
  }

  async cancel(tickets: readonly string[]): Promise<void> {
    if (tickets.length === 0) return;
    await this.#scripts.ibatchCancel(...this.#keys.slice(0, 3), ...tickets);
  }

  /** Re-stamps a granted slot in `buckets` from the server's now (its response came). */
  async extend(ticket: string, buckets: readonly Bucket[]): Promise<void> {
    const keys = buckets.map((b) => this.#keys[5 + BUCKETS.indexOf(b)]!);
    await this.#scripts.ibatchExtend(
      keys.length,
      ...keys,
      ticket,
      ...buckets.map((b) => this.#options.slotLifeMs(b)),
    );
  }

  /** Extends the shared pause (later wins). Returns its end on our clock. */
  async pause(until: { afterMs: number } | { at: number }): Promise<number> {
    const args: [string, number] =
      'afterMs' in until
        ? ['rel', Math.round(until.afterMs)]
        : ['abs', Math.round(until.at + this.#offset)];
    const sentAt = Date.now();
    const [pausedUntil, now] = await this.#scripts.ibatchPause(this.#keys[3]!, ...args);
    this.#learnOffset(Number(now), sentAt);
    return this.toLocal(Number(pausedUntil));
  }

  /** Adds phantoms so the shared free count <= `remaining`. */
  async shrink(bucket: Bucket, remaining: number, memberPrefix: string) {
    const index = BUCKETS.indexOf(bucket);
    const [added, phantoms] = await this.#scripts.ibatchShrink(
      this.#keys[5 + index]!,
      this.#keys[9 + index]!,
      this.#options.limits[bucket].count,
      this.#options.slotLifeMs(bucket),
      remaining,
      memberPrefix,
    );
    return { added: Number(added), phantoms: Number(phantoms) };
  }

  /** Writes slots taken while Redis was unreachable (ZADD keeps duplicates of a member once). */
  async upload(slots: SlotUpload): Promise<void> {
    const multi = this.#redis.multi();
    const write = (kind: 'log' | 'phantom', list: SlotUpload['used']) => {
      for (const { bucket, expiry, member } of list) {
        const key = this.#keys[(kind === 'log' ? 5 : 9) + BUCKETS.indexOf(bucket)]!;
        multi.zadd(key, Math.round(expiry + this.#offset), member);
        multi.pexpire(key, this.#options.slotLifeMs(bucket));
      }
    };
    write('log', slots.used);
    write('phantom', slots.phantom);
    await multi.exec();
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }

  /** Drops the connection and stops reconnecting. */
  close(): void {
    this.#redis.disconnect(false);
  }
}
