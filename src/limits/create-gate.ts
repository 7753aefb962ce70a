/**
 * `createGate`: the one factory the run engine calls. Without a store the
 * limits stay in this process; with `redis://HOST:PORT` (from
 * `--limits-store` or `IBATCH_REDIS_URL`) every runner of the account shares
 * them through Redis.
 */
import type { RateLimits } from '../contract/index.js';
import { type Logger, UsageError } from '../shared/index.js';
import { createLocalGate, type RateGate } from './local-gate.js';
import { createRedisGate, type FallbackEvent } from './redis/gate.js';
import { storeUrlWithoutCredentials } from './store-url.js';
import { reportLongWaits } from './wait-report.js';

export interface CreateGateOptions {
  /** `redis://HOST:PORT` or `rediss://...`; local limits when absent or empty. @default none: local limits */
  readonly store?: string | undefined;
  /** A fingerprint of the account (`accountFingerprint` of src/shared), never the API key. */
  readonly accountKey: string;
  /** Logs long waits at the gate and Redis fail-overs. @default none: nothing logged */
  readonly logger?: Logger;
  /** While Redis is unreachable each runner takes 1/peers of every bucket. @default 2 */
  readonly fallbackPeers?: number;
  /** With a store: this runner's weight in the shared buckets. @default 1 */
  readonly share?: number | undefined;
  /** Told when Redis becomes unreachable and when it is back. @default none */
  readonly onFallback?: (event: FallbackEvent) => void;
}

/** Throws `UsageError` (exit 2) unless `store` is a redis:// or rediss:// URL with a host. */
function parseLimitsStore(store: string): URL {
  let url: URL;
  try {
    url = new URL(store);
  } catch {
    throw new UsageError(
      `Expected \`--limits-store\` to be a URL like redis://HOST:PORT, got "${storeUrlWithoutCredentials(store)}"`,
    );
  }
  if ((url.protocol !== 'redis:' && url.protocol !== 'rediss:') || url.hostname === '') {
    throw new UsageError(
      `Expected \`--limits-store\` to be redis://HOST:PORT or rediss://HOST:PORT, got "${storeUrlWithoutCredentials(store)}"`,
    );
  }
  return url;
}

/** With a logger, a long wait at the gate is logged and bounded (wait-report.ts). */
export function createGate(limits: RateLimits, options: CreateGateOptions): RateGate {
  const gate = createStoreGate(limits, options);
  return options.logger ? reportLongWaits(gate, options.logger, limits) : gate;
}

function createStoreGate(limits: RateLimits, options: CreateGateOptions): RateGate {
  const store = options.store?.trim();
  if (!store) return createLocalGate(limits);
  parseLimitsStore(store);
  return createRedisGate(limits, {
    redisUrl: store,
    accountKey: options.accountKey,
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.fallbackPeers ? { fallbackPeers: options.fallbackPeers } : {}),
    ...(options.share === undefined ? {} : { share: options.share }),
    ...(options.onFallback ? { onFallback: options.onFallback } : {}),
  });
}
