/**
 * The one polling primitive of the tests: waits for a condition the test can
 * observe (a ledger entry, a file, a log line) instead of sleeping a guessed
 * time. No vitest import, so the chaos driver can use it outside a test run.
 */

/** What a truthy result can be (a probe may answer `false`, `0` or `''` for "not yet"). */
export type Truthy<T> = Exclude<T, false | 0 | '' | null | undefined>;

export interface UntilOptions {
  /** Fails after this long; default 5000 ms. */
  readonly timeoutMs?: number;
  /** Named in the timeout error. */
  readonly what?: string;
  /** Pause between probes; default 20 ms. */
  readonly everyMs?: number;
}

/**
 * Calls `probe` until it returns a truthy value and resolves with it; rejects
 * naming `what` once `timeoutMs` has passed. Errors thrown by `probe` end the
 * wait at once (a probe that sees a dead child should fail the test, not time out).
 */
export async function until<T>(
  probe: () => T | Promise<T>,
  options: UntilOptions = {},
): Promise<Truthy<T>> {
  const { timeoutMs = 5000, what = 'condition', everyMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as Truthy<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
