/** The last rate-limit headers the service sent, for the scheduler's display and pacing. */

export interface RateLimitSnapshot {
  /** `X-RateLimit-Limit` of the latest response that carried it. */
  readonly limit: number | undefined;
  /** `X-RateLimit-Remaining` of the latest response that carried it. */
  readonly remaining: number | undefined;
  /** When those were received (epoch ms); 0 before any. */
  readonly observedAt: number;
}

export const EMPTY_RATE_LIMIT: RateLimitSnapshot = {
  limit: undefined,
  remaining: undefined,
  observedAt: 0,
};

export function headerNumber(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const n = Number(value);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}
