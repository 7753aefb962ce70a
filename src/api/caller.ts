/**
 * Runs one endpoint call: waits for the gate, sends, reports rate feedback,
 * parses the answer with the contract's zod schema, and retries by the
 * policy in retry-policy.ts. Every endpoint method of the client is one call.
 */
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import {
  API_PREFIX,
  ENDPOINTS,
  type EndpointId,
  ErrorBodySchema,
  endpointPath,
} from '../contract/index.js';

import {
  type Logger,
  linkSignals,
  type RequestGate,
  redactDeep,
  type Sleep,
} from '../shared/index.js';
import { ApiError, ContractError, failureOfThrown, RetryAfterTooLongError } from './errors.js';

import { type ClientEvent, retryEvent } from './events.js';
import { describeOperation } from './operations.js';
import type { ResolvedTimeouts } from './options.js';
import { EMPTY_RATE_LIMIT, headerNumber, type RateLimitSnapshot } from './rate-limit.js';
import {
  type Failure,
  isRetryAfterTooLong,
  parseRetryAfter,
  RetryCounter,
  type RetryOptions,
} from './retry-policy.js';
import { type Exchange, send } from './transport.js';

export interface CallSpec<T> {
  readonly endpoint: EndpointId;
  readonly params?: Record<string, string>;
  readonly query?: Record<string, string | number | undefined>;
  readonly body?: unknown;
  readonly idempotencyKey?: string;
  readonly schema: z.ZodType<T>;
  readonly signal?: AbortSignal;
}

export interface CallResult<T> {
  readonly value: T;
  readonly status: number;
  readonly requestId: string | undefined;
}

export interface CallerDeps {
  readonly dispatcher: Dispatcher;
  readonly baseUrl: URL;
  /** Authorization, User-Agent, Accept: sent on every service request. */
  readonly headers: Readonly<Record<string, string>>;
  readonly gate: RequestGate;
  readonly logger: Logger;
  readonly onEvent: ((event: ClientEvent) => void) | undefined;
  readonly signal: AbortSignal | undefined;
  readonly limits: ResolvedTimeouts;
  readonly retry: RetryOptions;
  readonly sleep: Sleep;
}

export class Caller {
  rateLimit: RateLimitSnapshot = EMPTY_RATE_LIMIT;

  constructor(private readonly deps: CallerDeps) {}

  async call<T>(spec: CallSpec<T>): Promise<CallResult<T>> {
    const linked = linkSignals([this.deps.signal, spec.signal]);
    try {
      return await this.attempts(spec, linked.signal);
    } finally {
      linked.release();
    }
  }

  private async attempts<T>(
    spec: CallSpec<T>,
    signal: AbortSignal | undefined,
  ): Promise<CallResult<T>> {
    const { deps } = this;
    const endpoint = ENDPOINTS[spec.endpoint];
    const path = this.pathFor(spec);
    const headers: Record<string, string> = { ...deps.headers };
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = spec.idempotencyKey;
    const repeatable = !endpoint.creates || spec.idempotencyKey !== undefined;
    // Messages say what was being done; `endpoint` stays on the error and in the logs.
    const doing = describeOperation(spec.endpoint, spec.params);
    const retries = new RetryCounter(repeatable, deps.retry);

    for (let attempt = 1; ; attempt++) {
      await deps.gate.acquire(endpoint.buckets, signal);
      const started = Date.now();
      let error: unknown;
      let failure: Failure;
      try {
        const exchange = await send(
          deps.dispatcher,
          {
            operation: spec.endpoint,
            doing,
            origin: deps.baseUrl.origin,
            path,
            method: endpoint.method,
            headers,
            body,
            signal,
          },
          deps.limits,
        );
        const retryAfterMs = parseRetryAfter(exchange.headers['retry-after'], Date.now());
        if (isRetryAfterTooLong({ type: 'status', status: exchange.status, retryAfterMs })) {
          // The gate never hears of a days-long pause: it would be persisted and
          // obeyed by every resume. Stop now; a resume asks the service again.
          this.observe(endpoint.buckets, exchange, undefined);
          throw new RetryAfterTooLongError({
            endpoint: spec.endpoint,
            doing,
            header: exchange.headers['retry-after'] ?? '',
            retryAfterMs: retryAfterMs ?? Number.POSITIVE_INFINITY,
            now: Date.now(),
            ...(requestIdOf(exchange) === undefined ? {} : { requestId: requestIdOf(exchange) }),
          });
        }
        this.observe(endpoint.buckets, exchange, retryAfterMs);
        deps.logger.debug(
          { endpoint: spec.endpoint, status: exchange.status, ms: Date.now() - started, attempt },
          'service response',
        );
        if (exchange.status >= 200 && exchange.status < 300) {
          const value = parseBody(spec.endpoint, exchange.body, spec.schema, doing);
          return { value, status: exchange.status, requestId: requestIdOf(exchange) };
        }
        error = toApiError(
          { endpoint: spec.endpoint, doing, hint: this.hintFor(exchange.status) },
          exchange,
          retryAfterMs,
        );
        failure = { type: 'status', status: exchange.status, retryAfterMs };
      } catch (caught) {
        failure = failureOfThrown(caught);
        error = caught;
      }
      const decision = retries.next(failure);
      if (!decision.retry) throw error;
      const event = retryEvent(spec.endpoint, attempt + 1, decision, failure);
      deps.onEvent?.(event);
      deps.logger.debug(
        {
          endpoint: event.endpoint,
          attempt: event.attempt,
          delayMs: event.delayMs,
          reason: event.reason,
          status: event.status,
        },
        'retrying service request',
      );
      await deps.sleep(decision.delayMs, signal);
    }
  }

  /**
   * A 404 from a base URL without `/api/v1` means the base URL is wrong, not
   * the thing asked for: say which one was probably meant.
   */
  private hintFor(status: number): string | undefined {
    const { baseUrl } = this.deps;
    if (status !== 404 || baseUrl.pathname.endsWith(API_PREFIX)) return undefined;
    const prefix = baseUrl.pathname.replace(/\/+$/, '').replace(/\/api$/, '');
    return `check the base URL: did you mean ${baseUrl.origin}${prefix}${API_PREFIX}?`;
  }

  private pathFor(spec: CallSpec<unknown>): string {
    const path = this.deps.baseUrl.pathname + endpointPath(spec.endpoint, spec.params);
    const query = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined) query.set(name, String(value));
    }
    const text = query.toString();
    return text ? `${path}?${text}` : path;
  }

  private observe(
    buckets: RateFeedbackBuckets,
    exchange: Exchange,
    retryAfterMs: number | undefined,
  ): void {
    const limit = headerNumber(exchange.headers['x-ratelimit-limit']);
    const remaining = headerNumber(exchange.headers['x-ratelimit-remaining']);
    if (limit !== undefined || remaining !== undefined) {
      this.rateLimit = { limit, remaining, observedAt: Date.now() };
    }
    this.deps.gate.feedback({
      buckets,
      status: exchange.status,
      ...(limit === undefined ? {} : { limit }),
      ...(remaining === undefined ? {} : { remaining }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
}

type RateFeedbackBuckets = (typeof ENDPOINTS)[EndpointId]['buckets'];

export function parseBody<T>(
  endpoint: EndpointId,
  body: Buffer,
  schema: z.ZodType<T>,
  doing = describeOperation(endpoint),
): T {
  let json: unknown;
  try {
    // The boundary where service text comes in: a key it echoes goes no further.
    json = redactDeep(JSON.parse(body.toString('utf8')));
  } catch (cause) {
    throw new ContractError(endpoint, '', `malformed JSON (${body.length} bytes)`, {
      cause,
      doing,
    });
  }
  const parsed = schema.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issue ? issue.path.map(String).join('.') : '';
  const more =
    parsed.error.issues.length > 1 ? ` (and ${parsed.error.issues.length - 1} more)` : '';
  throw new ContractError(endpoint, path, `${issue?.message ?? 'invalid'}${more}`, {
    cause: parsed.error,
    doing,
  });
}

function toApiError(
  call: { endpoint: EndpointId; doing: string; hint: string | undefined },
  exchange: Exchange,
  retryAfterMs: number | undefined,
): ApiError {
  let code = `http_${exchange.status}`;
  let message = `HTTP ${exchange.status}`;
  let details: unknown;
  try {
    const parsed = ErrorBodySchema.safeParse(JSON.parse(exchange.body.toString('utf8')));
    if (parsed.success) {
      code = parsed.data.error.code;
      message = parsed.data.error.message;
      details = parsed.data.error.details;
    }
  } catch {
    // Not JSON (a proxy's HTML page, say): keep the status-derived code.
  }
  if (exchange.status >= 300 && exchange.status < 400) {
    message = `redirect to ${exchange.headers.location ?? '(no location)'}`;
  }
  return new ApiError({
    status: exchange.status,
    code,
    message,
    details,
    endpoint: call.endpoint,
    doing: call.doing,
    ...(call.hint === undefined ? {} : { hint: call.hint }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(requestIdOf(exchange) === undefined ? {} : { requestId: requestIdOf(exchange) }),
  });
}

function requestIdOf(exchange: Exchange): string | undefined {
  return exchange.headers['x-request-id'] ?? exchange.headers['request-id'];
}
