/**
 * The one table of what each failure of a service call means, shared by the
 * client's errors and retry policy, the run's stop/item decision (through the
 * errors) and the output downloader:
 *
 * | failure                           | retryable | exit | run                 |
 * |-----------------------------------|-----------|------|---------------------|
 * | 401, 403                          | no        | 5    | stop (unauthorized) |
 * | 402                               | no        | 3    | stop (credits)      |
 * | 408, 429, 5xx (and above)         | yes       | 4    | stop (unreachable)  |
 * | 3xx, other 4xx (400, 404, 409...) | no        | 2    | the item fails      |
 * | network fault, timeout            | yes       | 4    | stop (unreachable)  |
 * | contract break (shape, JSON, size)| no        | 4    | stop (unreachable)  |
 *
 * A 408 is the service (or a proxy in front of it) timing out on our
 * request: transient like a 5xx, so it is retried with the same key and,
 * once retries run out, stops the run as unreachable. A 429 that outlasts
 * its retries means the same. "Retryable" means repeating may succeed; the
 * client still repeats only requests that cannot charge twice.
 * The stop reason follows from the exit code (shared/exit-codes.ts).
 */
import { EXIT, type ExitCode } from '../shared/exit-codes.js';

export interface FailureMeaning {
  /** Repeating the same request may succeed (a transient fault). */
  readonly retryable: boolean;
  /** The process exit code; the run's stop reason follows from it. */
  readonly exitCode: ExitCode;
}

/** Failures without an HTTP status. */
export const TRANSPORT_FAILURES = {
  /** Refused, reset, DNS, socket closed mid-response. */
  network: 'network',
  /** Connect, response-headers or response-body timeout. */
  timeout: 'timeout',
  /** Malformed JSON, a wrong shape, a body over the size cap. */
  contract: 'contract',
} as const;
export type TransportFailure = (typeof TRANSPORT_FAILURES)[keyof typeof TRANSPORT_FAILURES];

const REFUSED_KEY: FailureMeaning = { retryable: false, exitCode: EXIT.unauthorized };
const NO_CREDITS: FailureMeaning = { retryable: false, exitCode: EXIT.credits };
const TRANSIENT: FailureMeaning = { retryable: true, exitCode: EXIT.unreachable };
const BROKEN: FailureMeaning = { retryable: false, exitCode: EXIT.unreachable };
/** What we sent was wrong (409: our payload changed under a key, a defect). */
const REJECTED: FailureMeaning = { retryable: false, exitCode: EXIT.invalid };

const BY_STATUS: Readonly<Record<number, FailureMeaning>> = {
  401: REFUSED_KEY,
  402: NO_CREDITS,
  403: REFUSED_KEY,
  408: TRANSIENT,
  429: TRANSIENT,
};

export const MEANING_OF_TRANSPORT: Readonly<Record<TransportFailure, FailureMeaning>> = {
  network: TRANSIENT,
  timeout: TRANSIENT,
  contract: BROKEN,
};

/** What a non-2xx answer means; a 3xx is a redirect we refuse to follow. */
export function meaningOfStatus(status: number): FailureMeaning {
  return BY_STATUS[status] ?? (status >= 500 ? TRANSIENT : REJECTED);
}
