/** Options of `createRedisGate`, validated, with their defaults in one place. */
import {
  API_KEY_PREFIX,
  BUCKETS,
  type Bucket,
  type RateLimits,
  type RateWindow,
} from '../../contract/index.js';
import { type Logger, UsageError } from '../../shared/index.js';
import { LOCAL_GATE_DEFAULTS } from '../local-gate.js';
import { storeHostPort } from '../store-url.js';
import { KEY_LAYOUT } from './scripts.js';

export interface FallbackEvent {
  /** `local`: Redis is unreachable, conservative local limits apply; `shared`: back on Redis. */
  readonly mode: 'local' | 'shared';
  readonly reason?: string;
}

/** The defaults of {@link RedisGateOptions} that are values, written once (`createGate` documents the ones it passes on). */
export const REDIS_GATE_DEFAULTS = {
  share: 1,
  keyPrefix: 'ibatch:',
  fallbackPeers: 2,
  leaseMs: 10_000,
  commandTimeoutMs: 1000,
  probeMs: 500,
} as const;

export interface RedisGateOptions {
  /** `redis://[:password@]host:port[/db]` or `rediss://...` */
  readonly redisUrl: string;
  /**
   * A fingerprint of the account, e.g. `accountFingerprint(apiKey)` of src/shared; NEVER the
   * API key itself. Runners with the same key share the buckets.
   */
  readonly accountKey: string;
  /**
   * This runner's weight in the shared buckets: while runners wait, one with
   * share 2 gets about twice the slots of one with share 1. @default 1
   */
  readonly share?: number;
  /** Followed by the key layout's version and the account, e.g. `ibatch:v2:{3fa2...}:`. @default 'ibatch:' */
  readonly keyPrefix?: string;
  /** While Redis is unreachable: local limits (the only mode). @default 'local' */
  readonly fallback?: 'local';
  /**
   * Runners assumed to share the account while Redis is unreachable: each
   * takes floor(count / peers) of every bucket. @default 2
   */
  readonly fallbackPeers?: number;
  /** Called once when falling back to local limits and once when back on Redis. */
  readonly onFallback?: (event: FallbackEvent) => void;
  readonly logger?: Logger;
  /** Extra life of each slot beyond the window. @default defaultSlotMarginMs */
  readonly marginMs?: (windowMs: number) => number;
  /** Pause after a 429 without Retry-After. @default 1000 */
  readonly defaultRetryAfterMs?: number;
  /** A waiting ticket lapses this long after its runner last touched it. @default 10000 */
  readonly leaseMs?: number;
  /** Connect and command timeout: past it, Redis counts as unreachable. @default 1000 */
  readonly commandTimeoutMs?: number;
  /** How often to look for Redis while on local limits. @default 500 */
  readonly probeMs?: number;
}

export interface ResolvedRedisOptions {
  readonly prefix: string;
  /** host:port only: the URL may carry a password. */
  readonly where: string;
  readonly peers: number;
  readonly share: number;
  readonly fallbackLimits: RateLimits;
  /** `fallbackLimits` with empty buckets at 1 (those are never acquired locally). */
  readonly fallbackGateLimits: RateLimits;
  readonly onFallback: ((event: FallbackEvent) => void) | undefined;
  readonly marginMs: (windowMs: number) => number;
  readonly defaultRetryAfterMs: number;
  readonly leaseMs: number;
  readonly maxSleepMs: number;
  readonly jitterMs: number;
  readonly mirrorRefreshMs: number;
  readonly commandTimeoutMs: number;
  readonly probeMs: number;
}

const ACCOUNT_KEY = /^[A-Za-z0-9_.:-]{8,128}$/;

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new TypeError(`Expected \`${name}\` to be a positive number, got ${value}`);
  }
  return value;
}

function divide(limits: RateLimits, peers: number, atLeast: number): RateLimits {
  const out = {} as Record<Bucket, RateWindow>;
  for (const bucket of BUCKETS) {
    const { count, windowMs } = limits[bucket];
    out[bucket] = { count: Math.max(atLeast, Math.floor(count / peers)), windowMs };
  }
  return out;
}

export function resolveRedisOptions(
  limits: RateLimits,
  options: RedisGateOptions,
): ResolvedRedisOptions {
  if (!ACCOUNT_KEY.test(options.accountKey) || options.accountKey.startsWith(API_KEY_PREFIX)) {
    throw new UsageError(
      'Expected `accountKey` to be a fingerprint of the account (8-128 of A-Z a-z 0-9 _ . : -, e.g. accountFingerprint(apiKey)), never the API key',
    );
  }
  let where: string;
  try {
    where = storeHostPort(new URL(options.redisUrl));
  } catch {
    throw new UsageError('Expected the limits store to be a URL like redis://HOST:PORT');
  }
  const peers = Math.floor(
    positive('fallbackPeers', options.fallbackPeers ?? REDIS_GATE_DEFAULTS.fallbackPeers),
  );
  const leaseMs = positive('leaseMs', options.leaseMs ?? REDIS_GATE_DEFAULTS.leaseMs);
  const shortest = Math.min(...BUCKETS.map((b) => limits[b].windowMs));
  return {
    prefix: `${options.keyPrefix ?? REDIS_GATE_DEFAULTS.keyPrefix}${KEY_LAYOUT}{${options.accountKey}}:`,
    where,
    peers,
    share: positive('share', options.share ?? REDIS_GATE_DEFAULTS.share),
    fallbackLimits: divide(limits, peers, 0),
    fallbackGateLimits: divide(limits, peers, 1),
    onFallback: options.onFallback,
    marginMs: options.marginMs ?? LOCAL_GATE_DEFAULTS.marginMs,
    defaultRetryAfterMs: options.defaultRetryAfterMs ?? LOCAL_GATE_DEFAULTS.defaultRetryAfterMs,
    leaseMs,
    // Sleep at most a quarter lease so a waiting ticket never lapses.
    maxSleepMs: leaseMs / 4,
    // Spreads wake-ups of waiters computed for the same instant; small against a window.
    jitterMs: Math.min(10, shortest / 100),
    mirrorRefreshMs: Math.min(250, shortest / 4),
    commandTimeoutMs: positive(
      'commandTimeoutMs',
      options.commandTimeoutMs ?? REDIS_GATE_DEFAULTS.commandTimeoutMs,
    ),
    probeMs: positive('probeMs', options.probeMs ?? REDIS_GATE_DEFAULTS.probeMs),
  };
}
