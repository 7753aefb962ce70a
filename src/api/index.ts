/**
 * @module api
 * The typed, fault-tolerant client of the service: the only module that
 * talks HTTP to it. See docs/client.md.
 */

export { sleepUntil } from '../shared/index.js';
export { parseBaseUrl } from './base-url.js';
export { type CallOptions, createClient, type ServiceClient } from './client.js';
export type { Created, CreateFacts } from './created.js';
export {
  ApiError,
  type ApiErrorInit,
  type ClientOperation,
  ContractError,
  NetworkError,
  RetryAfterTooLongError,
  TimeoutError,
  type TimeoutPhase,
} from './errors.js';
export type { ClientEvent, RetryEvent } from './events.js';
export { generateIdempotencyKey } from './idempotency.js';
export type { ClientOptions } from './options.js';
export { DEFAULT_TIMEOUTS } from './options.js';
export { PauseGate } from './pause-gate.js';
export type { RateLimitSnapshot } from './rate-limit.js';
export {
  backoffWithJitter,
  DEFAULT_RETRY_OPTIONS,
  decideRetry,
  type Failure,
  isRetryAfterTooLong,
  parseRetryAfter,
  type RetryContext,
  RetryCounter,
  type RetryDecision,
  type RetryOptions,
  type RetryReason,
} from './retry-policy.js';
export type { UploadOptions, UploadResult, UploadSource } from './upload.js';
