/**
 * `--limits` / `IBATCH_LIMITS`: `bucket=COUNT/DURATION` pairs separated by
 * commas, e.g. `requests=60/60s,generations=10/1m`. Durations take `ms`, `s`,
 * `m` or `h`. Buckets left out keep the service's published limits.
 */
import {
  BUCKETS,
  type Bucket,
  type RateLimits,
  type RateWindow,
  SERVICE_RATE_LIMITS,
} from '../contract/index.js';
import { UsageError } from '../shared/index.js';

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
const PAIR = /^([a-z]+)\s*=\s*(\d+)\s*\/\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)$/;

function isBucket(name: string): name is Bucket {
  return (BUCKETS as readonly string[]).includes(name);
}

/**
 * Parses a limits spec over `defaults`. Throws `UsageError` naming the bad
 * part, e.g. "Expected `--limits` bucket to be one of ..., got "foo"".
 */
export function parseLimitsSpec(
  spec: string,
  defaults: RateLimits = SERVICE_RATE_LIMITS,
): RateLimits {
  const limits: Record<Bucket, RateWindow> = { ...defaults };
  const seen = new Set<Bucket>();
  const parts = spec
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  for (const part of parts) {
    const name = part.split('=')[0]?.trim() ?? '';
    if (!isBucket(name)) {
      throw new UsageError(
        `Expected \`--limits\` bucket to be one of ${BUCKETS.join(', ')}, got "${name}" in "${part}"`,
      );
    }
    const match = PAIR.exec(part);
    if (!match) {
      throw new UsageError(
        `Expected \`--limits\` bucket ${name} as ${name}=COUNT/DURATION (e.g. ${name}=20/60s; units ms, s, m, h), got "${part}"`,
      );
    }
    const count = Number(match[2]);
    const windowMs = Math.round(Number(match[3]) * UNIT_MS[match[4] as keyof typeof UNIT_MS]);
    if (count < 1 || windowMs < 1) {
      throw new UsageError(
        `Expected \`--limits\` bucket ${name} to have a count >= 1 and a duration >= 1ms, got "${part}"`,
      );
    }
    if (seen.has(name))
      throw new UsageError(`Expected \`--limits\` bucket ${name} once, got it twice`);
    seen.add(name);
    limits[name] = { count, windowMs };
  }
  return limits;
}

/** The canonical spec of some limits, e.g. `requests=120/60s,...`; parses back to them. */
export function formatLimits(limits: RateLimits): string {
  return BUCKETS.map((bucket) => {
    const { count, windowMs } = limits[bucket];
    const duration = windowMs % 1000 === 0 ? `${windowMs / 1000}s` : `${windowMs}ms`;
    return `${bucket}=${count}/${duration}`;
  }).join(',');
}
