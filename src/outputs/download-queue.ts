/** Bounded download concurrency, for an engine that does not run its own queue. */
import PQueue from 'p-queue';

/**
 * A p-queue running at most `concurrency` downloads at once:
 * `queue.add(() => downloadOutput(...), { signal })`, `await queue.onIdle()`.
 * @default concurrency 4
 */
export function createDownloadQueue(concurrency = 4): PQueue {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`Expected \`concurrency\` to be a positive integer, got ${concurrency}`);
  }
  return new PQueue({ concurrency });
}
