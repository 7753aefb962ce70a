/** What the client reports while it works (progress displays, tests). */
import type { ClientOperation } from './errors.js';
import type { Failure, RetryDecision, RetryReason } from './retry-policy.js';

export interface RetryEvent {
  readonly type: 'retry';
  readonly endpoint: ClientOperation;
  /** The attempt about to be made (2 = first retry). */
  readonly attempt: number;
  readonly delayMs: number;
  readonly reason: RetryReason;
  /** HTTP status that caused the retry, when there was a response. */
  readonly status?: number;
}

export type ClientEvent = RetryEvent;

/** The event announcing that `attempt` follows after `decision`'s delay. */
export function retryEvent(
  endpoint: ClientOperation,
  attempt: number,
  decision: Extract<RetryDecision, { retry: true }>,
  failure: Failure,
): RetryEvent {
  return {
    type: 'retry',
    endpoint,
    attempt,
    delayMs: decision.delayMs,
    reason: decision.reason,
    ...(failure.type === 'status' ? { status: failure.status } : {}),
  };
}
