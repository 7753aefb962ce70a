/**
 * Typed errors of the service client. Every message is written for a person,
 * passes through `redact` (a last line of defence: the key is never put into
 * one on purpose), and carries its meaning (exit code, stop reason,
 * retryable) from the contract's failure table (contract/failure-meaning.ts).
 */
import {
  LONGEST_RETRY_AFTER_MS,
  MEANING_OF_TRANSPORT,
  meaningOfStatus,
  type TransportFailure,
} from '../contract/index.js';
import {
  type ExitCode,
  IbatchError,
  type IbatchErrorOptions,
  redact,
  redactDeep,
} from '../shared/index.js';
import { type ClientOperation, describeOperation } from './operations.js';
import type { Failure } from './retry-policy.js';

export type { ClientOperation };

/** What an error of the client may carry besides its cause. */
export interface ClientErrorOptions {
  readonly cause?: unknown;
  /** What was being done, in words (`describeOperation`); @default the operation's generic words */
  readonly doing?: string;
}

export interface ApiErrorInit {
  readonly status: number;
  /** The service's `error.code`, kept verbatim (also unknown ones). */
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
  readonly retryAfterMs?: number;
  readonly requestId?: string;
  readonly endpoint: ClientOperation;
  /** What was being done, in words; @default the endpoint's generic words */
  readonly doing?: string;
  /** One more sentence for the person (e.g. the base URL a 404 suggests). */
  readonly hint?: string;
}

/** The service answered with an error status (anything but 2xx). */
export class ApiError extends IbatchError {
  readonly status: number;
  /** The service's own message, redacted. `message` adds context for people. */
  readonly serviceMessage: string;
  /** The service's `details`, every string in them redacted. */
  readonly details: unknown;
  readonly retryAfterMs: number | undefined;
  readonly requestId: string | undefined;
  readonly endpoint: ClientOperation;

  constructor(init: ApiErrorInit, options?: { cause?: unknown }) {
    const meaning = meaningOfStatus(init.status);
    super(init.code, redact(describeApiError(init)), meaning.exitCode, {
      ...options,
      retryable: meaning.retryable,
    });
    this.status = init.status;
    this.serviceMessage = redact(init.message);
    this.details = redactDeep(init.details);
    this.retryAfterMs = init.retryAfterMs;
    this.requestId = init.requestId;
    this.endpoint = init.endpoint;
  }
}

function describeApiError(init: ApiErrorInit): string {
  const where = `${init.doing ?? describeOperation(init.endpoint)}: `;
  const said = `(${init.status} ${init.code}: ${init.message})`;
  const id = `${init.requestId ? ` [request ${init.requestId}]` : ''}${init.hint ? `: ${init.hint}` : ''}`;
  switch (init.status) {
    case 401:
      return `${where}the service refused the API key ${said}: set IBATCH_API_KEY to a valid key${id}`;
    case 402:
      return `${where}not enough credits on the account ${said}: top up, then resume${id}`;
    case 409:
      return `${where}idempotency key reused with a different payload ${said}: this is a defect, please report it${id}`;
    case 429:
      return `${where}rate limited by the service ${said}${id}`;
    default:
      if (init.status >= 300 && init.status < 400) {
        return `${where}the service answered with a redirect ${said}; redirects are not followed so the key never reaches another origin: check the base URL${id}`;
      }
      if (init.status >= 500) return `${where}the service failed ${said}${id}`;
      return `${where}the service rejected the request ${said}${id}`;
  }
}

/**
 * A 429 asked to wait longer than the contract's ceiling
 * (`LONGEST_RETRY_AFTER_MS`, 6 h). Not waited out, not retried: it stops the
 * run like any 429 that outlasts its retries (the failure table's 429 row:
 * exit 4, `stopped_unreachable`), and the next run asks the service again
 * with the same idempotency keys.
 */
export interface RetryAfterTooLongInit {
  readonly endpoint: ClientOperation;
  /** The `Retry-After` header as the service sent it. */
  readonly header: string;
  /** What it asks for, ms (Infinity for a number too big to hold). */
  readonly retryAfterMs: number;
  /** When the answer arrived (epoch ms). */
  readonly now: number;
  readonly requestId?: string;
  readonly doing?: string;
}

export class RetryAfterTooLongError extends IbatchError {
  readonly endpoint: ClientOperation;
  readonly retryAfterMs: number;
  /** When that wait would end (epoch ms; Infinity when past any date). */
  readonly until: number;
  readonly requestId: string | undefined;

  constructor(init: RetryAfterTooLongInit, options?: { cause?: unknown }) {
    const until = init.now + init.retryAfterMs;
    // 8.64e15: the last instant a Date can hold.
    const when = until <= 8.64e15 ? `, until ${new Date(until).toISOString()}` : '';
    const id = init.requestId ? ` [request ${init.requestId}]` : '';
    super(
      'retry_after_too_long',
      redact(
        `${init.doing ?? describeOperation(init.endpoint)}: rate limited, and the service asked to wait ` +
          `${describeWait(init.retryAfterMs)} (Retry-After: ${init.header.slice(0, 40)}${when}), ` +
          `more than the ${describeWait(LONGEST_RETRY_AFTER_MS)} ibatch waits out: stopped instead of waiting. ` +
          `Run the same command again later to resume: it asks the service again, ` +
          `and in-flight items keep their idempotency keys${id}`,
      ),
      meaningOfStatus(429).exitCode,
      { ...options, retryable: false },
    );
    this.endpoint = init.endpoint;
    this.retryAfterMs = init.retryAfterMs;
    this.until = until;
    this.requestId = init.requestId;
  }
}

function describeWait(ms: number): string {
  if (!Number.isFinite(ms)) return 'longer than any date';
  const hours = ms / 3_600_000;
  return hours < 48 ? `${Number(hours.toFixed(1))} h` : `${Number((hours / 24).toFixed(1))} days`;
}

/** The exit code and options of a failure without a status, from the table. */
function meaningOf(
  failure: TransportFailure,
  options: ClientErrorOptions | undefined,
): [ExitCode, IbatchErrorOptions] {
  const meaning = MEANING_OF_TRANSPORT[failure];
  const cause = options?.cause === undefined ? {} : { cause: options.cause };
  return [meaning.exitCode, { ...cause, retryable: meaning.retryable }];
}

function doingOf(endpoint: ClientOperation, options: ClientErrorOptions | undefined): string {
  return options?.doing ?? describeOperation(endpoint);
}

/** A response that breaks the contract: wrong shape, malformed JSON, too big. */
export class ContractError extends IbatchError {
  readonly endpoint: ClientOperation;
  /** Dotted path of the offending field, e.g. `models.3.fields.0.name`; empty for the whole body. */
  readonly path: string;

  constructor(
    endpoint: ClientOperation,
    path: string,
    problem: string,
    options?: ClientErrorOptions,
  ) {
    const at = path ? ` at \`${path}\`` : '';
    super(
      'contract',
      redact(
        `${doingOf(endpoint, options)}: the service's response breaks the contract${at}: ${problem}`,
      ),
      ...meaningOf('contract', options),
    );
    this.endpoint = endpoint;
    this.path = path;
  }
}

/** The connection failed: refused, reset, DNS, socket closed mid-response. */
export class NetworkError extends IbatchError {
  readonly endpoint: ClientOperation;
  /** The low-level cause code (`ECONNRESET`, `ENOTFOUND`, `UND_ERR_SOCKET`...). */
  readonly causeCode: string | undefined;

  constructor(
    endpoint: ClientOperation,
    causeCode: string | undefined,
    detail: string,
    options?: ClientErrorOptions,
  ) {
    super(
      'network',
      redact(
        `${doingOf(endpoint, options)}: could not reach the service (${causeCode ?? 'network error'}): ${detail}`,
      ),
      ...meaningOf('network', options),
    );
    this.endpoint = endpoint;
    this.causeCode = causeCode;
  }
}

export type TimeoutPhase = 'connect' | 'headers' | 'body';

/** A connect, response-headers or response-body timeout elapsed. */
export class TimeoutError extends IbatchError {
  readonly endpoint: ClientOperation;
  readonly phase: TimeoutPhase;

  constructor(
    endpoint: ClientOperation,
    phase: TimeoutPhase,
    timeoutMs: number,
    options?: ClientErrorOptions,
  ) {
    super(
      'timeout',
      `${doingOf(endpoint, options)}: the service did not ${phaseVerb(phase)} within ${timeoutMs} ms`,
      ...meaningOf('timeout', options),
    );
    this.endpoint = endpoint;
    this.phase = phase;
  }
}

function phaseVerb(phase: TimeoutPhase): string {
  switch (phase) {
    case 'connect':
      return 'accept the connection';
    case 'headers':
      return 'start answering';
    case 'body':
      return 'finish sending its answer';
    default: {
      const never: never = phase;
      return String(never);
    }
  }
}

/**
 * What a thrown transport error means to the retry policy: a network fault
 * or a timeout. Anything else is not a transport fault and is rethrown.
 */
export function failureOfThrown(caught: unknown): Failure {
  if (caught instanceof NetworkError) return { type: 'network' };
  if (caught instanceof TimeoutError) return { type: 'timeout' };
  throw caught;
}
