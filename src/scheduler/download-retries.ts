/**
 * A download tried again, in place, after a fault a later try may not meet:
 * a connection the file server closed (a keep-alive socket it dropped while
 * this process was stopped or busy), a timeout, a 5xx. The client's retry
 * policy (src/api, `RetryCounter`: the same backoff with jitter and the same
 * reading of statuses and transport faults), with its own smaller budget.
 * What no retry can fix (a 4xx, a redirect elsewhere, a protected name, a
 * local file problem) is thrown at once; so is what is left after the
 * budget: the output fails, and the next run downloads it again.
 */
import { type Failure, RetryCounter, type RetryOptions } from '../api/index.js';
import {
  DOWNLOAD_FAILURES,
  DownloadError,
  type DownloadOptions,
  type DownloadResult,
  downloadOutput,
} from '../outputs/index.js';
import { sleep } from '../shared/index.js';

/**
 * Three retries after 1, 2 and 4 s at most (full jitter). An assumption: a
 * dropped connection or a busy origin is back within seconds; an origin down
 * for longer is for the next run, not worth holding the run's end for.
 */
export const DOWNLOAD_RETRY: RetryOptions = {
  baseDelayMs: 1000,
  maxDelayMs: 4000,
  maxRetries: 3,
  maxRateLimitRetries: 3,
  random: Math.random,
};

/** `downloadOutput`, retried after faults (see the module comment); `signal` ends the waits. */
export async function downloadRetrying(
  options: DownloadOptions,
  signal: AbortSignal,
  retry: RetryOptions = DOWNLOAD_RETRY,
): Promise<DownloadResult> {
  const retries = new RetryCounter(true, retry);
  for (;;) {
    try {
      return await downloadOutput(options);
    } catch (error) {
      const failure = signal.aborted ? undefined : retryableFailure(error);
      const decision = failure ? retries.next(failure) : undefined;
      if (!decision?.retry) throw error;
      await sleep(decision.delayMs, signal);
    }
  }
}

/** What the retry policy reads of a download's failure; undefined when no retry can fix it. */
function retryableFailure(error: unknown): Failure | undefined {
  if (!(error instanceof DownloadError) || !error.retryable) return undefined;
  if (error.status !== undefined) return { type: 'status', status: error.status };
  if (error.reason === DOWNLOAD_FAILURES.timeout) return { type: 'timeout' };
  if (error.reason === DOWNLOAD_FAILURES.network) return { type: 'network' };
  return undefined;
}
