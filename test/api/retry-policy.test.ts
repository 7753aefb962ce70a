import { describe, expect, it } from 'vitest';
import {
  backoffWithJitter,
  DEFAULT_RETRY_OPTIONS,
  decideRetry,
  isRetryAfterTooLong,
  parseRetryAfter,
  type RetryContext,
  type RetryOptions,
} from '../../src/api/index.js';
import { LONGEST_RETRY_AFTER_MS } from '../../src/contract/index.js';

const fixed = (value: number): RetryOptions => ({ ...DEFAULT_RETRY_OPTIONS, random: () => value });
const fresh: RetryContext = { faultRetries: 0, rateLimitRetries: 0, repeatable: true };

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 1, 12, 0, 0);

  it('reads integer seconds exactly', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
  });

  it('does not cap long waits (trainings: ~1 hour)', () => {
    expect(parseRetryAfter('3599', now)).toBe(3_599_000);
    expect(parseRetryAfter('86400', now)).toBe(86_400_000);
  });

  it('rounds fractional seconds up so it never sends early', () => {
    expect(parseRetryAfter('1.2', now)).toBe(1200);
    expect(parseRetryAfter('0.0015', now)).toBe(2);
  });

  it('reads an HTTP-date relative to now, never negative', () => {
    expect(parseRetryAfter(new Date(now + 5000).toUTCString(), now)).toBe(5000);
    expect(parseRetryAfter(new Date(now - 5000).toUTCString(), now)).toBe(0);
  });

  it('returns undefined when absent or malformed', () => {
    for (const bad of [undefined, '', '  ', '-1', 'soon', '1e3', '5 seconds', 'NaN']) {
      expect(parseRetryAfter(bad, now)).toBeUndefined();
    }
  });
});

describe('decideRetry', () => {
  it('waits exactly Retry-After on 429, even when the request is not repeatable', () => {
    const decision = decideRetry(
      { type: 'status', status: 429, retryAfterMs: 3_500_000 },
      { ...fresh, repeatable: false },
    );
    expect(decision).toEqual({ retry: true, delayMs: 3_500_000, reason: 'rate-limited' });
  });

  it('falls back to exponential backoff from 1 s when a 429 has no usable Retry-After', () => {
    const delays = [0, 1, 2, 3].map((n) => {
      const d = decideRetry({ type: 'status', status: 429 }, { ...fresh, rateLimitRetries: n });
      return d.retry ? d.delayMs : -1;
    });
    expect(delays).toEqual([1000, 2000, 4000, 8000]);
  });

  it('bounds the number of 429 retries', () => {
    const decision = decideRetry(
      { type: 'status', status: 429, retryAfterMs: 10 },
      { ...fresh, rateLimitRetries: DEFAULT_RETRY_OPTIONS.maxRateLimitRetries },
    );
    expect(decision.retry).toBe(false);
  });

  it.each([500, 502, 503, 504])('retries %i with full jitter', (status) => {
    const decision = decideRetry({ type: 'status', status }, fresh, fixed(0.5));
    expect(decision).toEqual({ retry: true, delayMs: 500, reason: 'server-error' });
  });

  it('retries network faults and timeouts', () => {
    expect(decideRetry({ type: 'network' }, fresh, fixed(0.25))).toEqual({
      retry: true,
      delayMs: 250,
      reason: 'network',
    });
    expect(decideRetry({ type: 'timeout' }, fresh, fixed(0.25))).toMatchObject({
      reason: 'timeout',
    });
  });

  it('stops after maxRetries faults', () => {
    const context = { ...fresh, faultRetries: 4 };
    expect(decideRetry({ type: 'status', status: 503 }, context).retry).toBe(false);
    expect(decideRetry({ type: 'network' }, { ...fresh, faultRetries: 3 }).retry).toBe(true);
  });

  it('never retries a fault of a create without an idempotency key', () => {
    const context = { ...fresh, repeatable: false };
    expect(decideRetry({ type: 'network' }, context).retry).toBe(false);
    expect(decideRetry({ type: 'timeout' }, context).retry).toBe(false);
    expect(decideRetry({ type: 'status', status: 500 }, context).retry).toBe(false);
  });

  it.each([400, 401, 402, 403, 404, 409, 422, 307])('never retries %i', (status) => {
    expect(decideRetry({ type: 'status', status }, fresh).retry).toBe(false);
  });
});

describe('backoffWithJitter', () => {
  it('grows exponentially from 1 s and is capped at 30 s', () => {
    const ceilings = [0, 1, 2, 3, 4, 5, 6, 40].map((n) => backoffWithJitter(n, fixed(0.999_999)));
    expect(ceilings).toEqual([999, 1999, 3999, 7999, 15_999, 29_999, 29_999, 29_999]);
  });

  it('spans [0, ceiling) with full jitter', () => {
    expect(backoffWithJitter(3, fixed(0))).toBe(0);
    const samples = Array.from({ length: 200 }, () => backoffWithJitter(2, DEFAULT_RETRY_OPTIONS));
    expect(Math.min(...samples)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...samples)).toBeLessThan(4000);
    expect(new Set(samples).size).toBeGreaterThan(50);
  });
});

describe('the Retry-After ceiling', () => {
  it('is 6 hours: six times the longest window (trainings, 1 hour)', () => {
    expect(LONGEST_RETRY_AFTER_MS).toBe(6 * 3_600_000);
  });

  it('a 429 asking for more is not retried; up to the ceiling it is waited out', () => {
    const over = { type: 'status', status: 429, retryAfterMs: LONGEST_RETRY_AFTER_MS + 1 } as const;
    expect(isRetryAfterTooLong(over)).toBe(true);
    expect(decideRetry(over, fresh)).toEqual({ retry: false });
    const at = { type: 'status', status: 429, retryAfterMs: LONGEST_RETRY_AFTER_MS } as const;
    expect(isRetryAfterTooLong(at)).toBe(false);
    expect(decideRetry(at, fresh)).toMatchObject({ retry: true, delayMs: LONGEST_RETRY_AFTER_MS });
  });

  it('an HTTP-date in 2100 and an endless number are over it; no header is not', () => {
    const now = Date.UTC(2026, 10, 23);
    for (const header of [new Date(Date.UTC(2100, 0, 1)).toUTCString(), '9'.repeat(400)]) {
      const retryAfterMs = parseRetryAfter(header, now);
      expect(isRetryAfterTooLong({ type: 'status', status: 429, retryAfterMs })).toBe(true);
    }
    expect(isRetryAfterTooLong({ type: 'status', status: 429 })).toBe(false);
    expect(isRetryAfterTooLong({ type: 'status', status: 503, retryAfterMs: 1e12 })).toBe(false);
  });
});
