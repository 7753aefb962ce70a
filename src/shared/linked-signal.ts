/**
 * The one way to make a signal that aborts when any of several does.
 *
 * Not `AbortSignal.any`: Node (20, and 22 before its fix) keeps, in every
 * source signal, a reference to each signal ever made from it, and drops it
 * only when the source aborts. A run's stop signal lives as long as the run
 * and is combined once per request, so those references grew with the items
 * done. Here the link is two plain listeners that `release()` removes: once
 * the work that used the signal is over, the sources hold nothing of it.
 */
export interface LinkedSignal {
  /** Aborts, with the first source's reason, when any source aborts; undefined when no source was given. */
  readonly signal: AbortSignal | undefined;
  /** Detaches from the sources and stops the timer; call it when the work that used `signal` is over. */
  release(): void;
}

export interface LinkOptions {
  /** Also abort after this many ms, with a `TimeoutError` (as `AbortSignal.timeout` does). */
  readonly timeoutMs?: number;
}

const NOTHING_TO_RELEASE = (): void => undefined;

export function linkSignals(
  sources: readonly (AbortSignal | undefined)[],
  options: LinkOptions & { readonly timeoutMs: number },
): LinkedSignal & { readonly signal: AbortSignal };
export function linkSignals(
  sources: readonly (AbortSignal | undefined)[],
  options?: LinkOptions,
): LinkedSignal;
export function linkSignals(
  sources: readonly (AbortSignal | undefined)[],
  options: LinkOptions = {},
): LinkedSignal {
  const present = sources.filter((s): s is AbortSignal => s !== undefined);
  const only = present[0];
  // One source and no timer: the source itself, nothing to attach or release.
  if (options.timeoutMs === undefined && present.length <= 1) {
    return { signal: only, release: NOTHING_TO_RELEASE };
  }
  const controller = new AbortController();
  const aborted = present.find((s) => s.aborted);
  if (aborted) {
    controller.abort(aborted.reason);
    return { signal: controller.signal, release: NOTHING_TO_RELEASE };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const onAbort = (event: Event): void => {
    release();
    controller.abort((event.target as AbortSignal).reason);
  };
  const release = (): void => {
    for (const source of present) source.removeEventListener('abort', onAbort);
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
  };
  for (const source of present) source.addEventListener('abort', onAbort, { once: true });
  if (options.timeoutMs !== undefined) {
    timer = setTimeout(() => {
      release();
      controller.abort(
        new DOMException('The operation was aborted due to timeout', 'TimeoutError'),
      );
    }, options.timeoutMs);
    // Like AbortSignal.timeout: the timer alone does not keep the process alive.
    timer.unref?.();
  }
  return { signal: controller.signal, release };
}
