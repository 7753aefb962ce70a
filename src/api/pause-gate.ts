/**
 * The gate used when the caller brings none: no local rate limiting, only the
 * account-wide pause after a 429. Every request of the client (and of anything
 * else sharing this gate) waits until the Retry-After has elapsed.
 */
import type { Bucket } from '../contract/index.js';
import type { RateFeedback, RequestGate } from '../shared/index.js';
import { sleepUntil } from '../shared/index.js';

export class PauseGate implements RequestGate {
  /** Epoch ms before which no request may be sent. */
  private notBefore = 0;

  async acquire(_buckets: readonly Bucket[], signal?: AbortSignal): Promise<void> {
    // Loop: another 429 may extend the pause while we wait.
    while (Date.now() < this.notBefore) await sleepUntil(this.notBefore, signal);
  }

  feedback(feedback: RateFeedback): void {
    if (feedback.status !== 429) return;
    const until = Date.now() + (feedback.retryAfterMs ?? 1000);
    this.notBefore = Math.max(this.notBefore, until);
  }

  /** When the current pause ends (epoch ms); 0 when not paused. */
  get pausedUntil(): number {
    return this.notBefore > Date.now() ? this.notBefore : 0;
  }
}
