/**
 * The seam between the HTTP client and whoever enforces rate limits (the
 * rate gates of src/limits, local or shared through Redis). The client calls
 * `acquire` immediately before each send (so a slot is stamped at send time,
 * not long before) and `feedback` after each response.
 */
import type { Bucket } from '../contract/limits.js';

export interface RateFeedback {
  /** Buckets the request counted against (always includes `requests`). */
  readonly buckets: readonly Bucket[];
  /** HTTP status of the response. */
  readonly status: number;
  /** `X-RateLimit-Limit`, when the response carried it. */
  readonly limit?: number;
  /** `X-RateLimit-Remaining`, when the response carried it. */
  readonly remaining?: number;
  /** On a 429: how long the service asked us to wait, in ms. */
  readonly retryAfterMs?: number;
}

export interface RequestGate {
  /**
   * Resolves when a request counting against `buckets` may be sent now.
   * Rejects with the signal's reason if aborted while waiting.
   */
  acquire(buckets: readonly Bucket[], signal?: AbortSignal): Promise<void>;
  /** Tells the gate what the service said; a 429 pauses every caller. */
  feedback(feedback: RateFeedback): void;
}
