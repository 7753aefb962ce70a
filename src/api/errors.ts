/**
 * Typed errors of the service client. Every message is written for a person,
 * passes through `redact` (a last line of defence: the key is never put into
 * one on purpose), and carries its meaning (exit code, stop reason,
 * retryable) from the contract's failure table (contract/failure-meaning.ts).
 */
import {
  type EndpointId,
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
import type { Failure } from './retry-policy.js';

/** Endpoint ids plus the presigned upload PUT, which is not a service endpoint. */
export type ClientOperation = EndpointId | 'upload';

export interface ApiErrorInit {
  readonly status: number;
  /** The service's `error.code`, kept verbatim (also unknown ones). */
  readonly code: string;
  readonly message: string;
  readonly details?: unknown;
  readonly retryAfterMs?: number;
  readonly requestId?: string;
  readonly endpoint: ClientOperation;
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
  const where = `${init.endpoint}: `;
  const said = `(${init.status} ${init.code}: ${init.message})`;
  const id = init.requestId ? ` [request ${init.requestId}]` : '';
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

/** The exit code and options of a failure without a status, from the table. */
function meaningOf(
  failure: TransportFailure,
  options: { cause?: unknown } | undefined,
): [ExitCode, IbatchErrorOptions] {
  const meaning = MEANING_OF_TRANSPORT[failure];
  return [meaning.exitCode, { ...options, retryable: meaning.retryable }];
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
    options?: { cause?: unknown },
  ) {
    const at = path ? ` at \`${path}\`` : '';
    super(
      'contract',
      redact(`${endpoint}: the service's response breaks the contract${at}: ${problem}`),
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
    options?: { cause?: unknown },
  ) {
    super(
      'network',
      redact(
        `${endpoint}: could not reach the service (${causeCode ?? 'network error'}): ${detail}`,
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
    options?: { cause?: unknown },
  ) {
    super(
      'timeout',
      `${endpoint}: the service did not ${phaseVerb(phase)} within ${timeoutMs} ms`,
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
