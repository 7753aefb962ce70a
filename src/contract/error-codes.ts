/**
 * Error codes of the reference's error table. Clients must keep codes they do
 * not know verbatim, so this is a list of known values, not a closed type.
 */
export const ERROR_CODES = {
  validation: 'validation_error',
  unauthorized: 'unauthorized',
  insufficientCredits: 'insufficient_credits',
  notFound: 'not_found',
  idempotencyConflict: 'idempotency_conflict',
  rateLimited: 'rate_limited',
  internal: 'internal_error',
} as const;

export type KnownErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export const STATUS_FOR_CODE: Readonly<Record<KnownErrorCode, number>> = {
  validation_error: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  not_found: 404,
  idempotency_conflict: 409,
  rate_limited: 429,
  internal_error: 500,
};
