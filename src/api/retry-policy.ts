/**
 * When to retry a failed request, and how long to wait first. Pure: no I/O,
 * randomness injected, so every rule is unit-tested directly.
 *
 * - 429: wait exactly what `Retry-After` says (seconds or an HTTP-date), with
 *   no cap below the contract's `LONGEST_RETRY_AFTER_MS` (6 h): trainings are
 *   5 per hour, so waits near an hour are real. A longer wait is not retried:
 *   the caller stops with a `RetryAfterTooLongError` (errors.ts). Without a
 *   usable header, back off exponentially from `baseDelayMs`.
 * - Other retryable failures (5xx, 408, connection faults, timeouts: the
 *   contract's failure table, contract/failure-meaning.ts): exponential
 *   backoff with full jitter, capped at `maxDelayMs`, at most `maxRetries` times.
 * - A request that creates something billable is retried only when it
 *   carries an Idempotency-Key (the service deduplicates it). A 429 is safe to
 *   retry either way: the service refused it before doing anything.
 * - Any other status (4xx, 409 above all) is never retried.
 */
import {
  LONGEST_RETRY_AFTER_MS,
  MEANING_OF_TRANSPORT,
  meaningOfStatus,
} from '../contract/index.js';

export interface RetryOptions {
  /** First backoff step for faults. @default 1000 */
  readonly baseDelayMs: number;
  /** Ceiling of one fault backoff (not of Retry-After: see `isRetryAfterTooLong`). @default 30000 */
  readonly maxDelayMs: number;
  /** Retries after 5xx, connection faults and timeouts. @default 4 */
  readonly maxRetries: number;
  /** Retries after 429 responses (each waits its Retry-After). @default 10 */
  readonly maxRateLimitRetries: number;
  /** Source of jitter in [0, 1). @default Math.random */
  readonly random: () => number;
}

export const DEFAULT_RETRY_OPTIONS: RetryOptions = {
  baseDelayMs: 1000,
  maxDelayMs: 30_000,
  maxRetries: 4,
  maxRateLimitRetries: 10,
  random: Math.random,
};

/** What went wrong with one attempt. */
export type Failure =
  | { readonly type: 'status'; readonly status: number; readonly retryAfterMs?: number }
  | { readonly type: 'network' }
  | { readonly type: 'timeout' };

export interface RetryContext {
  /** Fault retries already made for this call (429 retries are counted apart). */
  readonly faultRetries: number;
  /** 429 retries already made for this call. */
  readonly rateLimitRetries: number;
  /** True when repeating the request cannot charge twice (reads, keyed creates, quotes, presign). */
  readonly repeatable: boolean;
}

export type RetryReason = 'rate-limited' | 'server-error' | 'network' | 'timeout';

export type RetryDecision =
  | { readonly retry: false }
  | { readonly retry: true; readonly delayMs: number; readonly reason: RetryReason };

const NO_RETRY: RetryDecision = { retry: false };

export function decideRetry(
  failure: Failure,
  context: RetryContext,
  options: RetryOptions = DEFAULT_RETRY_OPTIONS,
): RetryDecision {
  if (failure.type === 'status' && failure.status === 429) {
    if (context.rateLimitRetries >= options.maxRateLimitRetries) return NO_RETRY;
    if (isRetryAfterTooLong(failure)) return NO_RETRY;
    const delayMs =
      failure.retryAfterMs ?? options.baseDelayMs * 2 ** Math.min(context.rateLimitRetries, 16);
    return { retry: true, delayMs, reason: 'rate-limited' };
  }
  const reason = faultReason(failure);
  if (!reason || !context.repeatable || context.faultRetries >= options.maxRetries) return NO_RETRY;
  return { retry: true, delayMs: backoffWithJitter(context.faultRetries, options), reason };
}

/**
 * A 429 whose Retry-After exceeds the contract's ceiling: never waited out
 * (a timer that long overflows, and a run must not hang for days), a stop.
 */
export function isRetryAfterTooLong(failure: Failure): boolean {
  return (
    failure.type === 'status' &&
    failure.status === 429 &&
    failure.retryAfterMs !== undefined &&
    failure.retryAfterMs > LONGEST_RETRY_AFTER_MS
  );
}

/**
 * The retries of one request, counted by kind: `next` decides and counts the
 * retry it allows, so the client's calls and the upload PUT keep one set of books.
 */
export class RetryCounter {
  #faultRetries = 0;
  #rateLimitRetries = 0;

  constructor(
    private readonly repeatable: boolean,
    private readonly options: RetryOptions,
  ) {}

  next(failure: Failure): RetryDecision {
    const decision = decideRetry(
      failure,
      {
        faultRetries: this.#faultRetries,
        rateLimitRetries: this.#rateLimitRetries,
        repeatable: this.repeatable,
      },
      this.options,
    );
    if (decision.retry) {
      if (decision.reason === 'rate-limited') this.#rateLimitRetries++;
      else this.#faultRetries++;
    }
    return decision;
  }
}

function faultReason(failure: Failure): RetryReason | undefined {
  switch (failure.type) {
    case 'status':
      return meaningOfStatus(failure.status).retryable ? 'server-error' : undefined;
    case 'network':
    case 'timeout':
      return MEANING_OF_TRANSPORT[failure.type].retryable ? failure.type : undefined;
    default: {
      const never: never = failure;
      return never;
    }
  }
}

/** "Full jitter": uniform in [0, min(cap, base * 2^n)). */
export function backoffWithJitter(retriesSoFar: number, options: RetryOptions): number {
  const ceiling = Math.min(
    options.maxDelayMs,
    options.baseDelayMs * 2 ** Math.min(retriesSoFar, 30),
  );
  return Math.floor(options.random() * ceiling);
}

/**
 * Parses a `Retry-After` header: delta-seconds (the reference says integer;
 * a fraction is accepted) or an HTTP-date. Returns undefined when absent or
 * malformed so the caller falls back to backoff. Never negative.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.ceil(Number(text) * 1000);
  // Only a real date: Date.parse accepts odd strings like "5" or "-1".
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
