/** Fixed numbers from the reference's "Limits" table. */
export const LIMITS = {
  uploadMaxBytes: 8_388_608,
  presignLifetimeSeconds: 120,
  copiesMax: 4,
  historyLimitMin: 1,
  historyLimitMax: 50,
  idempotencyKeyMax: 200,
  trainingImagesMax: 20,
  trainingNameMax: 80,
  usernameMin: 3,
  usernameMax: 30,
} as const;

/** The four rate buckets the service counts per account. */
export const BUCKETS = ['requests', 'generations', 'trainings', 'uploads'] as const;
export type Bucket = (typeof BUCKETS)[number];

export interface RateWindow {
  /** Operations allowed per window. */
  readonly count: number;
  /** Window length in milliseconds. */
  readonly windowMs: number;
}

export type RateLimits = Readonly<Record<Bucket, RateWindow>>;

/** The service's published limits (per account). */
export const SERVICE_RATE_LIMITS: RateLimits = {
  requests: { count: 120, windowMs: 60_000 },
  generations: { count: 20, windowMs: 60_000 },
  trainings: { count: 5, windowMs: 3_600_000 },
  uploads: { count: 30, windowMs: 60_000 },
};

/**
 * The longest `Retry-After` ibatch waits out: six times the longest window the
 * service counts (trainings, 1 hour), so 6 hours. A real rate limit never asks
 * for more; a longer (or far-future HTTP-date) answer is a broken or hostile
 * server, and waiting it out would leave a run hanging for days. Such an
 * answer stops the run instead (`retry_after_too_long`, exit 4, resumable),
 * and the wait is never persisted: a resume asks the service again.
 */
export const LONGEST_RETRY_AFTER_MS =
  6 * Math.max(...Object.values(SERVICE_RATE_LIMITS).map((window) => window.windowMs));
