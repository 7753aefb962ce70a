/**
 * The run's part of the wait promise (shared/waits.ts): while the log has
 * been quiet, one line says what the run waits for (generations in flight
 * per kind and the first one's deadline, trainings, downloads). The rate
 * gate reports its own waiters (limits/wait-report.ts).
 */
import { clockTime, logIsQuiet, WAIT_CHECK_MS } from '../shared/index.js';
import type { RunContext } from './context.js';

export interface RunWaits {
  readonly trainings: () => number;
  readonly downloads: () => number;
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
    const parts = [
      ...(generations > 0
        ? [
            `${generations} generation(s) to finish (${[...byKind].map(([kind, n]) => `${kind} ${n}`).join(', ')}${firstDeadlineAt ? `; the first gives up at ${clockTime(firstDeadlineAt)}` : ''})`,
          ]
        : []),
      ...(trainings > 0 ? [`${trainings} training(s) to finish`] : []),
      ...(downloads > 0 ? [`${downloads} download(s)`] : []),
    ];
    if (parts.length === 0) return;
    ctx.logger.info(
      { event: 'run.waiting', generations, trainings, downloads },
      `waiting for ${parts.join('; ')}`,
    );
  }, WAIT_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
