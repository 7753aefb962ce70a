/**
 * The run's part of the wait promise (shared/waits.ts): while the log has
 * been quiet, one line says what the run waits for (generations in flight
 * per kind and the first one's deadline, trainings, downloads, requests at
 * the rate gate). Whichever reporter speaks first resets the quiet: the rate
 * gate's own (limits/wait-report.ts) says why its requests wait.
 */
import { clockTime, logIsQuiet, noteLogLine, WAIT_CHECK_MS } from '../shared/index.js';
import type { RunContext } from './context.js';

export interface RunWaits {
  readonly trainings: () => number;
  readonly downloads: () => number;
  /** Requests waiting at the rate gate (its snapshot's `waiting`). */
  readonly atGate: () => number;
}

/** Starts the reports; returns the function that stops them. */
export function startRunHeartbeat(
  ctx: Pick<RunContext, 'watcher' | 'logger'>,
  waits: RunWaits,
): () => void {
  const timer = setInterval(() => {
    if (!logIsQuiet()) return;
    const { byKind, firstDeadlineAt } = ctx.watcher.waiting();
    const generations = [...byKind.values()].reduce((sum, n) => sum + n, 0);
    const trainings = waits.trainings();
    const downloads = waits.downloads();
    const atGate = waits.atGate();
    const parts = [
      ...(generations > 0
        ? [
            `${generations} generation(s) to finish (${[...byKind].map(([kind, n]) => `${kind} ${n}`).join(', ')}${firstDeadlineAt ? `; the first gives up at ${clockTime(firstDeadlineAt)}` : ''})`,
          ]
        : []),
      ...(trainings > 0 ? [`${trainings} training(s) to finish`] : []),
      ...(downloads > 0 ? [`${downloads} download(s)`] : []),
      ...(atGate > 0 ? [`${atGate} request(s) to pass the rate limits`] : []),
    ];
    if (parts.length === 0) return;
    ctx.logger.info(
      { event: 'run.waiting', generations, trainings, downloads, atGate },
      `waiting for ${parts.join('; ')}`,
    );
    // A logger of the library's caller does not tell waits.ts: count this line here.
    noteLogLine();
  }, WAIT_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
