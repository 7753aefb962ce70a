/**
 * Which timers a test file left running. `process.getActiveResourcesInfo()`
 * counts timers unreliably (a firing interval drops out of the count), so
 * the global setTimeout/setInterval are wrapped for the file and every timer
 * they made is asked at the end: still scheduled (`_destroyed` unset) and
 * still keeping the process alive (`hasRef()`) is a leak.
 */

interface NodeTimer extends NodeJS.Timeout {
  readonly _destroyed?: boolean;
  readonly _idleTimeout?: number;
  readonly _repeat?: number | null;
}

export interface TimerTracker {
  /** Timers made since `trackTimers()` that are still scheduled and referenced. */
  live(): string[];
  /** Puts the original globals back. */
  stop(): void;
}

export function trackTimers(): TimerTracker {
  const made = new Set<NodeTimer>();
  const original = { setTimeout: globalThis.setTimeout, setInterval: globalThis.setInterval };
  const track = (timer: NodeTimer) => {
    // Fired and cleared timers are dropped now and then, so long files stay cheap.
    if (made.size > 1000) for (const t of made) if (t._destroyed) made.delete(t);
    made.add(timer);
    return timer;
  };
  const wrap = <F extends typeof setTimeout | typeof setInterval>(fn: F): F =>
    Object.assign(
      (...args: Parameters<F>) => track((fn as (...a: unknown[]) => NodeTimer)(...args)),
      fn,
    );
  globalThis.setTimeout = wrap(original.setTimeout);
  globalThis.setInterval = wrap(original.setInterval);
  return {
    live: () =>
      [...made]
        .filter((t) => !t._destroyed && t.hasRef())
        .map((t) => `${t._repeat ? 'setInterval' : 'setTimeout'} (${t._idleTimeout} ms)`),
    stop: () => {
      globalThis.setTimeout = original.setTimeout;
      globalThis.setInterval = original.setInterval;
    },
  };
}
