/** Every fault the emulator can inject, as an `as const` list plus its type. */
export const FAULT_KINDS = [
  // answered instead of handling the request
  'rate-limit-burst', // 429 rate_limited with Retry-After
  'rate-limit-no-header', // 429 rate_limited without Retry-After
  'error-500',
  'error-502',
  'error-503',
  'reset-before', // connection reset before any handling
  'stall', // never answers
  'redirect', // 307 to another origin (the upload origin records a leaked Authorization)
  'huge-body', // 200 with a huge JSON body
  'endless-body', // 200 whose body never ends
  // delay, then handle normally
  'slow',
  // handled normally, then the response is damaged
  'reset-after-commit', // handled (and charged), then the connection is reset
  'malformed-json',
  'missing-field',
  'unknown-status', // status strings like RUNNING / Succeeded
  // outcomes decided at create time
  'generation-fail', // fails (+ refund)
  'copy-fail', // the last copy of a multi-copy image create fails (+ its refund); scripted only
  'safety-block',
  'never-terminal',
  'training-fail', // fails (+ refund)
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** Faults that replace the handling of the request. */
export const PRE_FAULTS: ReadonlySet<FaultKind> = new Set([
  'rate-limit-burst',
  'rate-limit-no-header',
  'error-500',
  'error-502',
  'error-503',
  'reset-before',
  'stall',
  'redirect',
  'huge-body',
  'endless-body',
  'slow',
]);

/** Faults applied to the response of a normally handled request. */
export const POST_FAULTS: ReadonlySet<FaultKind> = new Set([
  'reset-after-commit',
  'malformed-json',
  'missing-field',
  'unknown-status',
]);

/** Faults that decide the outcome of what a create makes. */
export const OUTCOME_FAULTS: ReadonlySet<FaultKind> = new Set([
  'generation-fail',
  'copy-fail',
  'safety-block',
  'never-terminal',
  'training-fail',
]);

export function isFaultKind(value: string): value is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(value);
}
