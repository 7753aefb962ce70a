/**
 * The one abortable sleep. `sleep(ms, signal)` rejects with the signal's
 * reason as soon as it aborts. Waiting never ends early: timers may fire a millisecond
 * before their due time, and a request sent before a Retry-After elapsed is
 * exactly what the service punishes, so we wait on a deadline, not a delay.
 */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

/**
 * The longest delay one timer may be given. Node stores timer delays as a
 * signed 32-bit count of ms: anything above 2^31-1 (24.8 days) is replaced by
 * 1 ms with a `TimeoutOverflowWarning`, so a loop re-arming such a timer spins.
 * Long waits are made of steps of at most this (a day: far below the limit).
 */
export const MAX_TIMER_STEP_MS = 24 * 3_600_000;

/** `ms` as a safe timer delay: never negative, never above {@link MAX_TIMER_STEP_MS}. */
export function timerStep(ms: number): number {
  return Math.min(Math.max(0, ms), MAX_TIMER_STEP_MS);
}

export async function sleepUntil(deadlineMs: number, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  for (let left = deadlineMs - Date.now(); left > 0; left = deadlineMs - Date.now()) {
    // +1: Node rounds timer durations, so aim just past the deadline.
    await delay(timerStep(left + 1), signal);
  }
}

/**
 * One timer step, ended early by `signal` with the caller's reason (e.g. an
 * InterruptedError, not a generic AbortError). The global setTimeout, not
 * node:timers/promises: a test's fake clock (vi.useFakeTimers) drives it.
 */
function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

export const sleep: Sleep = (ms, signal) => sleepUntil(Date.now() + ms, signal);
