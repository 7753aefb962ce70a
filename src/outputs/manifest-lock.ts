/**
 * The lock every change of a folder's manifest holds: several processes may
 * write one folder's manifest at once (jobs sharing the folder), and each
 * change (an append, a rewrite) holds it for its few milliseconds.
 */
import path from 'node:path';
import { describeHolder, holderLogFields, withLockSync } from '../journal/index.js';
import type { Logger } from '../shared/index.js';
import { ManifestLockedError } from './errors.js';

/** The lock every change of a folder's manifest holds (see withManifestLock). */
export const MANIFEST_LOCK = '.ibatch-manifest.lock';

/**
 * How long a change of the manifest waits for another process's change. An
 * assumption: a change holds the lock for one append or one rewrite, and a
 * holder still at it after this is more likely stuck (on another host,
 * which cannot be judged stale) than slow.
 */
const MANIFEST_LOCK_WAIT_MS = 60_000;

/**
 * Runs `change` holding `dir`'s manifest lock (manifest-writer.ts). A wait
 * for another process's change is told to `logger` whenever the log has
 * been quiet, naming the holder and the deadline.
 */
export function withManifestLock<T>(dir: string, change: () => T, logger?: Logger): T {
  const lock = path.join(dir, MANIFEST_LOCK);
  return withLockSync(lock, change, {
    waitMs: MANIFEST_LOCK_WAIT_MS,
    refuse: (holder) =>
      new ManifestLockedError(
        lock,
        holder ? `process ${holder.pid} on ${holder.hostname}` : 'another process',
      ),
    ...(logger
      ? {
          onWait: (holder, waitedMs) =>
            logger.warn(
              { event: 'manifest.waiting', lock, ...holderLogFields(holder) },
              `waiting for the manifest of ${dir}: its lock is held by ${describeHolder(holder)}; ` +
                `${Math.round(waitedMs / 1000)} s of at most ${MANIFEST_LOCK_WAIT_MS / 1000} s`,
            ),
        }
      : {}),
  });
}
