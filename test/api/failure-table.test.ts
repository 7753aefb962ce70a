/**
 * The whole failure mapping in one table: every HTTP status and transport
 * failure the client can meet -> retryable?, item failure or stop (and why),
 * exit code. Each row is asserted through the real error classes (built by
 * the client's own status and undici-error mapping), the retry policy and
 * `classifyError`; a few rows again end to end over loopback HTTP.
 */
import { describe, expect, it } from 'vitest';
import {
  ApiError,
  ContractError,
  createClient,
  DEFAULT_TIMEOUTS,
  decideRetry,
  type Failure,
  NetworkError,
  RetryAfterTooLongError,
  TimeoutError,
} from '../../src/api/index.js';
import { type SendInit, toTransportError } from '../../src/api/transport.js';
import { LONGEST_RETRY_AFTER_MS } from '../../src/contract/index.js';
import type { FaultKind } from '../../src/emulator/index.js';
import { classifyError } from '../../src/scheduler/classify.js';
import { EXIT, type ExitCode, ensureIbatchError, type StopReason } from '../../src/shared/index.js';
import { defer } from '../helpers/index.js';
import { startEmulatorClient } from './helpers/emulator-client.js';
import { json, startLocalServer } from './helpers/local-server.js';

type Outcome = 'item' | StopReason;
interface Row {
  readonly retryable: boolean;
  readonly outcome: Outcome;
  readonly exit: ExitCode;
}

const ITEM_INVALID: Row = { retryable: false, outcome: 'item', exit: EXIT.invalid };
const TRANSIENT: Row = { retryable: true, outcome: 'unreachable', exit: EXIT.unreachable };
const REFUSED_KEY: Row = { retryable: false, outcome: 'unauthorized', exit: EXIT.unauthorized };

const STATUS_TABLE: ReadonlyArray<readonly [status: number, label: string, row: Row]> = [
  [300, 'multiple choices (a redirect we never follow)', ITEM_INVALID],
  [301, 'moved permanently', ITEM_INVALID],
  [302, 'found', ITEM_INVALID],
  [307, 'temporary redirect', ITEM_INVALID],
  [400, 'validation_error', ITEM_INVALID],
  [401, 'unauthorized', REFUSED_KEY],
  [402, 'insufficient_credits', { retryable: false, outcome: 'credits', exit: EXIT.credits }],
  [403, 'forbidden: treated like a refused key', REFUSED_KEY],
  [404, 'not_found', ITEM_INVALID],
  [408, 'request timeout: transient like 5xx', TRANSIENT],
  [409, 'idempotency_conflict: a defect, never retried', ITEM_INVALID],
  [410, 'gone', ITEM_INVALID],
  [413, 'payload too large', ITEM_INVALID],
  [415, 'unsupported media type', ITEM_INVALID],
  [418, 'unknown 4xx', ITEM_INVALID],
  [422, 'unprocessable', ITEM_INVALID],
  [429, 'rate_limited (retried after Retry-After)', TRANSIENT],
  [451, 'another unknown 4xx', ITEM_INVALID],
  [500, 'internal_error', TRANSIENT],
  [502, 'bad gateway', TRANSIENT],
  [503, 'unavailable', TRANSIENT],
  [504, 'gateway timeout', TRANSIENT],
  [507, 'other 5xx', TRANSIENT],
  [599, 'last 5xx', TRANSIENT],
];

const init: SendInit = {
  operation: 'getAccount',
  origin: 'http://127.0.0.1:9',
  path: '/api/v1/account',
  method: 'GET',
  headers: {},
};
const limits = DEFAULT_TIMEOUTS;
const undiciError = (code: string, message = code) => Object.assign(new Error(message), { code });
const systemError = (code: string, syscall: string) =>
  Object.assign(new Error(`${syscall} ${code}`), { code, syscall });

/** A thrown error as the client's transport mapping turns it into ours. */
function transport(error: Error, signal?: AbortSignal): unknown {
  return toTransportError(error, signal ? { ...init, signal } : init, limits);
}

const aborted = new AbortController();
aborted.abort(new DOMException('This operation was aborted', 'AbortError'));

const TRANSPORT_TABLE: ReadonlyArray<
  readonly [label: string, make: () => unknown, failure: Failure | undefined, row: Row]
> = [
  [
    'connection refused',
    () => transport(systemError('ECONNREFUSED', 'connect')),
    { type: 'network' },
    TRANSIENT,
  ],
  ['connection reset', () => transport(undiciError('ECONNRESET')), { type: 'network' }, TRANSIENT],
  [
    'DNS failure',
    () => transport(systemError('ENOTFOUND', 'getaddrinfo')),
    { type: 'network' },
    TRANSIENT,
  ],
  [
    'socket closed mid-response',
    () => transport(undiciError('UND_ERR_SOCKET')),
    { type: 'network' },
    TRANSIENT,
  ],
  [
    'connect timeout',
    () => transport(undiciError('UND_ERR_CONNECT_TIMEOUT')),
    { type: 'timeout' },
    TRANSIENT,
  ],
  [
    'headers timeout',
    () => transport(undiciError('UND_ERR_HEADERS_TIMEOUT')),
    { type: 'timeout' },
    TRANSIENT,
  ],
  [
    'body timeout',
    () => transport(undiciError('UND_ERR_BODY_TIMEOUT')),
    { type: 'timeout' },
    TRANSIENT,
  ],
  [
    'malformed JSON',
    () => new ContractError('getAccount', '', 'malformed JSON (3 bytes)'),
    undefined,
    { retryable: false, outcome: 'unreachable', exit: EXIT.unreachable },
  ],
  [
    'contract break (missing field)',
    () => new ContractError('getAccount', 'credits', 'Required'),
    undefined,
    { retryable: false, outcome: 'unreachable', exit: EXIT.unreachable },
  ],
  [
    'abort (our signal)',
    () => transport(undiciError('UND_ERR_ABORTED'), aborted.signal),
    undefined,
    { retryable: false, outcome: 'interrupted', exit: EXIT.interrupted },
  ],
  [
    'an unknown error (a bug)',
    () => transport(new TypeError('x is not a function')),
    undefined,
    { retryable: false, outcome: 'unreachable', exit: EXIT.unreachable },
  ],
];

const running = new AbortController().signal;
const fresh = { faultRetries: 0, rateLimitRetries: 0, repeatable: true };

function verdictOf(error: unknown): Outcome {
  const verdict = classifyError(error, running);
  return verdict.kind === 'item' ? 'item' : verdict.reason;
}

describe('the failure table: HTTP statuses', () => {
  it.each(STATUS_TABLE)('%i (%s)', (status, _label, row) => {
    const error = new ApiError({
      status,
      code: `http_${status}`,
      message: `HTTP ${status}`,
      endpoint: 'getAccount',
    });
    expect(error.retryable).toBe(row.retryable);
    expect(decideRetry({ type: 'status', status }, fresh).retry).toBe(row.retryable);
    expect(error.stopReason ?? 'item').toBe(row.outcome);
    expect(verdictOf(error)).toBe(row.outcome);
    expect(error.exitCode).toBe(row.exit);
  });

  it('an item verdict keeps the status; any failure once the run is stopping is interrupted', () => {
    const error = new ApiError({
      status: 404,
      code: 'not_found',
      message: 'x',
      endpoint: 'getModel',
    });
    expect(classifyError(error, running)).toMatchObject({ kind: 'item', status: 404 });
    expect(classifyError(error, aborted.signal)).toMatchObject({
      kind: 'stop',
      reason: 'interrupted',
    });
  });
});

describe('the failure table: transport failures', () => {
  it.each(TRANSPORT_TABLE)('%s', (_label, make, failure, row) => {
    const error = make();
    if (failure?.type === 'network') expect(error).toBeInstanceOf(NetworkError);
    if (failure?.type === 'timeout') expect(error).toBeInstanceOf(TimeoutError);
    const ours = ensureIbatchError(error);
    expect(ours.retryable).toBe(row.retryable);
    // What the client's retry policy does with it (contract breaks and aborts are rethrown).
    if (failure) expect(decideRetry(failure, fresh).retry).toBe(row.retryable);
    expect(ours.stopReason ?? 'item').toBe(row.outcome);
    expect(verdictOf(error)).toBe(row.outcome);
    expect(ours.exitCode).toBe(row.exit);
  });
});

describe('the failure table end to end', () => {
  it('408 is retried like a 5xx, and once retries run out stops the run as unreachable', async () => {
    let answered = 0;
    const server = await startLocalServer((_req, res) => {
      answered++;
      json(res, 408, { error: { code: 'request_timeout', message: 'too slow' } });
    });
    defer(() => server.stop());
    const client = createClient({
      baseUrl: server.baseUrl,
      apiKey: 'ifk_live_failure_table_0123456789',
      retry: { baseDelayMs: 1, maxDelayMs: 2, maxRetries: 2 },
    });
    defer(() => client.close());
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(answered).toBe(3);
    expect(error).toBeInstanceOf(ApiError);
    expect(classifyError(error, running)).toMatchObject({ kind: 'stop', reason: 'unreachable' });
    expect((error as ApiError).exitCode).toBe(EXIT.unreachable);
  });

  it("the emulator's injected faults mean what the table says", async () => {
    const env = await startEmulatorClient(
      {},
      { retry: { baseDelayMs: 1, maxDelayMs: 2, maxRetries: 1 } },
    );
    // `times`: one answer per attempt the client makes (1 + retries if retryable).
    const outcomeOf = async (fault: FaultKind, times: number): Promise<unknown> => {
      await env.emulator.admin.scriptFaults([{ fault, endpoint: 'getAccount', times }]);
      return env.client.getAccount().catch((e: unknown) => e);
    };

    const storm = await outcomeOf('error-503', 2);
    expect(storm).toMatchObject({ status: 503, code: 'internal_error', retryable: true });
    expect(verdictOf(storm)).toBe('unreachable');

    const reset = await outcomeOf('reset-before', 2);
    expect(reset).toBeInstanceOf(NetworkError);
    expect(verdictOf(reset)).toBe('unreachable');

    const broken = await outcomeOf('malformed-json', 1);
    expect(broken).toBeInstanceOf(ContractError);
    expect(verdictOf(broken)).toBe('unreachable');

    // The emulator answers a contract error code with the contract's status.
    expect((await env.emulator.admin.stats()).pendingFaultScripts).toEqual([]);
    const missing = await env.client.getModel('no-such-model').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'not_found', retryable: false });
    expect(verdictOf(missing)).toBe('item');
  });
});

describe('the failure table: a 429 asking to wait beyond the ceiling', () => {
  const now = Date.UTC(2026, 10, 23, 12);

  it('is not retried, and stops the run as unreachable (exit 4) with its own code', () => {
    const failure: Failure = { type: 'status', status: 429, retryAfterMs: 3_000_000_000 };
    expect(decideRetry(failure, fresh).retry).toBe(false);
    const error = new RetryAfterTooLongError({
      endpoint: 'createGeneration',
      header: '3000000',
      retryAfterMs: 3_000_000_000,
      now,
    });
    expect(error).toMatchObject({ code: 'retry_after_too_long', retryable: false });
    expect(error.exitCode).toBe(EXIT.unreachable);
    expect(verdictOf(error)).toBe('unreachable');
    expect(error.message).toContain('wait 34.7 days (Retry-After: 3000000, until');
    expect(error.message).toContain(new Date(now + 3_000_000_000).toISOString());
    expect(error.message).toMatch(/again later to resume/);
    const endless = new RetryAfterTooLongError({
      endpoint: 'getAccount',
      header: '9'.repeat(400),
      retryAfterMs: Number.POSITIVE_INFINITY,
      now,
    });
    expect(endless.message).toContain('wait longer than any date (Retry-After: 9999');
  });

  it('a wait up to the ceiling is still waited out exactly', () => {
    const failure: Failure = { type: 'status', status: 429, retryAfterMs: LONGEST_RETRY_AFTER_MS };
    expect(decideRetry(failure, fresh)).toEqual({
      retry: true,
      delayMs: LONGEST_RETRY_AFTER_MS,
      reason: 'rate-limited',
    });
  });

  it.each([
    ['3000000 seconds (34.7 days)', '3000000'],
    ['an HTTP-date in 2100', new Date(Date.UTC(2100, 0, 1)).toUTCString()],
    ['a number too big to hold', '9'.repeat(400)],
  ])('over loopback HTTP: %s stops at once, sent once', async (_label, header) => {
    let answered = 0;
    const server = await startLocalServer((_req, res) => {
      answered++;
      res.setHeader('retry-after', header);
      json(res, 429, { error: { code: 'rate_limited', message: 'slow down' } });
    });
    defer(() => server.stop());
    const client = createClient({
      baseUrl: server.baseUrl,
      apiKey: 'ifk_live_failure_table_0123456789',
    });
    defer(() => client.close());
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(answered).toBe(1);
    expect(error).toBeInstanceOf(RetryAfterTooLongError);
    expect(classifyError(error, running)).toMatchObject({ kind: 'stop', reason: 'unreachable' });
    expect((error as RetryAfterTooLongError).exitCode).toBe(EXIT.unreachable);
  });
});
