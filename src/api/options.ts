/** Options of `createClient`, with their defaults in one place. */
import type { Logger, RequestGate, Sleep } from '../shared/index.js';
import type { ClientEvent } from './events.js';
import { DEFAULT_RETRY_OPTIONS, type RetryOptions } from './retry-policy.js';

export interface ClientOptions {
  /** Service base URL including `/api/v1`; https unless loopback. */
  readonly baseUrl: string;
  /** The account's API key (the CLI reads it from IBATCH_API_KEY only). */
  readonly apiKey: string;
  /** Rate limiter seam; @default a PauseGate (only pauses after a 429) */
  readonly gate?: RequestGate;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Observes retries (progress, tests). @default none */
  readonly onEvent?: (event: ClientEvent) => void;
  /** Cancels every request and wait of this client. @default none */
  readonly signal?: AbortSignal;
  /** TCP/TLS connect timeout. @default 10000 */
  readonly connectTimeoutMs?: number;
  /** Time allowed until response headers arrive. @default 30000 */
  readonly headersTimeoutMs?: number;
  /** Time allowed between two body chunks. @default 30000 */
  readonly bodyTimeoutMs?: number;
  /** Largest response body read before giving up. @default 10485760 (10 MiB) */
  readonly maxResponseBytes?: number;
  /** Keep-alive connections to the service. @default 8 */
  readonly connections?: number;
  /** Retry tuning; see retry-policy.ts. @default DEFAULT_RETRY_OPTIONS */
  readonly retry?: Partial<RetryOptions>;
  /** Injected for tests. @default sleep (deadline-based, abortable) */
  readonly sleep?: Sleep;
}

export interface ResolvedTimeouts {
  readonly connectTimeoutMs: number;
  readonly headersTimeoutMs: number;
  readonly bodyTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly connections: number;
}

export const DEFAULT_TIMEOUTS = {
  connectTimeoutMs: 10_000,
  headersTimeoutMs: 30_000,
  bodyTimeoutMs: 30_000,
  maxResponseBytes: 10 * 1024 * 1024,
  connections: 8,
} as const satisfies ResolvedTimeouts;

export function resolveTimeouts(options: ClientOptions): ResolvedTimeouts {
  const resolved = {
    connectTimeoutMs: options.connectTimeoutMs ?? DEFAULT_TIMEOUTS.connectTimeoutMs,
    headersTimeoutMs: options.headersTimeoutMs ?? DEFAULT_TIMEOUTS.headersTimeoutMs,
    bodyTimeoutMs: options.bodyTimeoutMs ?? DEFAULT_TIMEOUTS.bodyTimeoutMs,
    maxResponseBytes: options.maxResponseBytes ?? DEFAULT_TIMEOUTS.maxResponseBytes,
    connections: options.connections ?? DEFAULT_TIMEOUTS.connections,
  };
  for (const [name, value] of Object.entries(resolved)) {
    if (!Number.isInteger(value) || value <= 0) {
      throw new TypeError(`Expected \`${name}\` to be a positive integer, got ${String(value)}`);
    }
  }
  return resolved;
}

export function resolveRetry(options: ClientOptions): RetryOptions {
  const retry = { ...DEFAULT_RETRY_OPTIONS, ...options.retry };
  for (const name of ['baseDelayMs', 'maxDelayMs', 'maxRetries', 'maxRateLimitRetries'] as const) {
    const value = retry[name];
    if (!Number.isFinite(value) || value < 0) {
      throw new TypeError(`Expected \`retry.${name}\` to be a number >= 0, got ${String(value)}`);
    }
  }
  return retry;
}
