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
