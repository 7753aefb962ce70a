/**
 * One HTTP exchange over an undici dispatcher: send, read the body under a
 * size cap, and turn undici's failures into our typed errors. No retries and
 * no redirects here (undici's `request` follows none without an interceptor).
 */
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type ClientOperation, ContractError, NetworkError, TimeoutError } from './errors.js';
import type { ResolvedTimeouts } from './options.js';

export interface Exchange {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
}

export interface SendInit {
  readonly operation: ClientOperation;
  /** What the request does, in words, for error messages (`describeOperation`). */
  readonly doing?: string;
  readonly origin: string;
  /** Path plus query. */
  readonly path: string;
  readonly method: 'GET' | 'POST' | 'PUT';
  readonly headers: Record<string, string>;
  readonly body?: string | Buffer | Uint8Array | Readable;
  readonly signal?: AbortSignal;
}

export async function send(
  dispatcher: Dispatcher,
  init: SendInit,
  limits: ResolvedTimeouts,
): Promise<Exchange> {
  let response: Dispatcher.ResponseData;
  try {
    response = await dispatcher.request({
      origin: init.origin,
      path: init.path,
      method: init.method,
      headers: init.headers,
      body: init.body ?? null,
      headersTimeout: limits.headersTimeoutMs,
      bodyTimeout: limits.bodyTimeoutMs,
      signal: init.signal,
    });
  } catch (error) {
    throw toTransportError(error, init, limits);
  }
  const headers = flattenHeaders(response.headers);
  const body = await readCapped(response.body, init, limits);
  return { status: response.statusCode, headers, body };
}

async function readCapped(
  body: Dispatcher.ResponseData['body'],
  init: SendInit,
  limits: ResolvedTimeouts,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += (chunk as Buffer).length;
      if (size > limits.maxResponseBytes) {
        body.destroy();
        throw new ContractError(
          init.operation,
          '',
          `the body exceeds ${limits.maxResponseBytes} bytes; stopped reading`,
          wordsOf(init),
        );
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    if (error instanceof ContractError) throw error;
    throw toTransportError(error, init, limits);
  }
  return Buffer.concat(chunks, size);
}

function flattenHeaders(
  raw: Dispatcher.ResponseData['headers'],
): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(raw)) {
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

const NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_RES_CONTENT_LENGTH_MISMATCH',
  'HPE_INVALID_CONSTANT',
]);

function wordsOf(init: SendInit): { doing?: string } {
  return init.doing === undefined ? {} : { doing: init.doing };
}

/** Maps undici/socket errors to NetworkError/TimeoutError; aborts pass through. */
export function toTransportError(
  error: unknown,
  init: SendInit,
  limits: ResolvedTimeouts,
): unknown {
  if (init.signal?.aborted) return init.signal.reason ?? error;
  const code = (error as { code?: unknown } | null)?.code;
  const text = typeof code === 'string' ? code : undefined;
  switch (text) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new TimeoutError(init.operation, 'connect', limits.connectTimeoutMs, {
        cause: error,
        ...wordsOf(init),
      });
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new TimeoutError(init.operation, 'headers', limits.headersTimeoutMs, {
        cause: error,
        ...wordsOf(init),
      });
    case 'UND_ERR_BODY_TIMEOUT':
      return new TimeoutError(init.operation, 'body', limits.bodyTimeoutMs, {
        cause: error,
        ...wordsOf(init),
      });
    default:
      break;
  }
  const message = error instanceof Error ? error.message : String(error);
  if ((text && (NETWORK_CODES.has(text) || text.startsWith('HPE_'))) || isSystemError(error)) {
    return new NetworkError(init.operation, text, message, { cause: error, ...wordsOf(init) });
  }
  // Anything else (a bad argument, a bug) is not a network fault: never retry it.
  return error;
}

function isSystemError(error: unknown): boolean {
  return error instanceof Error && typeof (error as { syscall?: unknown }).syscall === 'string';
}
