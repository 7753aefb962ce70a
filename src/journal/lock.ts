/**
 * One process at a time per lock file, holding `{pid, hostname, startedAt}`
 * (and the journal the holder writes, when it says). The journal takes one per
 * job (identity.ts says where they live); a run takes one more per job in
 * its output folder (src/scheduler/output-folder-lock.ts). It is created atomically with complete
 * content (written to a temp file, then `link`ed into place, which fails if
 * the lock exists), so a reader never sees a half-written lock.
 *
 * A lock whose holder is gone (same host, pid not alive, or started before
 * this boot) is stale: a SIGKILLed run never deletes its lock, so the next
 * opener takes it over. A lock from another host cannot be checked and is
 * always respected. "Host" here is the OS's own name, not `thisMachine()`:
 * a pid can only be asked of the OS that issued it, and `HOSTNAME` may be
 * set differently by two processes on one OS (a cron line and a shell).
 */

import { linkSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname, uptime } from 'node:os';
import { dirname } from 'node:path';
import { LONGEST_RETRY_AFTER_MS } from '../contract/index.js';
import {
  isAlive,
  logIsQuiet,
  makeFolderSync,
  noteLogLine,
  removeDeadWritersTemps,
  sleep,
  tempBeside,
} from '../shared/index.js';
import { JournalLockedError, type LockHolder } from './errors.js';

export interface LockOptions {
  /** false: fail at once; true: wait up to LONGEST_LOCK_WAIT_MS; a number: wait that many ms. */
  readonly wait?: boolean | number;
  readonly signal?: AbortSignal;
  /** Told when a live holder makes us wait (with `wait`), and again while the log is quiet (shared/waits.ts). */
  readonly onWait?: (holder: LockHolder | undefined) => void;
  /** Told when a stale lock was taken over. */
  readonly onStaleTakeover?: (holder: LockHolder | undefined) => void;
  /** @default 200 */
  readonly retryIntervalMs?: number;
  /** The job the lock is for: named in the refusal. */
  readonly job?: string;
  /** The journal the holder writes: recorded in the lock, so a refusal can name it. */
  readonly journal?: string;
  /** The error when a live holder keeps the lock. @default JournalLockedError */
  readonly refuse?: (path: string, holder: LockHolder | undefined) => Error;
}

export interface HeldLock {
  readonly path: string;
  readonly holder: LockHolder;
  release(): void;
}

function readHolder(path: string): LockHolder | undefined {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
    if (typeof parsed.pid === 'number' && typeof parsed.hostname === 'string') {
      const { pid, hostname: host, journal } = parsed;
      const holder = { pid, hostname: host, startedAt: Number(parsed.startedAt) };
      return typeof journal === 'string' ? { ...holder, journal } : holder;
    }
  } catch {
    // Unreadable or vanished: handled by the caller as "no valid holder".
  }
  return undefined;
}

/**
 * When this machine booted, read once: read again at each look as
 * `Date.now() - uptime()`, it moved with whatever clock `Date.now()` reads
 * (a test's fake clock six hours on, on a machine up for less, took every
 * live holder for one from before the boot).
 */
const BOOTED_AT = Date.now() - uptime() * 1000;

/** Whether a lock can be taken over. Only provable on the same host. */
export function isStale(holder: LockHolder | undefined): boolean {
  if (!holder) return true; // atomic creation means this is garbage, not a writer mid-write
  if (holder.hostname !== hostname()) return false;
  if (holder.startedAt < BOOTED_AT - 60_000) return true; // pid from before a reboot
  return !isAlive(holder.pid);
}

function tryCreate(path: string, holder: LockHolder): boolean {
  const temp = tempBeside(path);
  try {
    // Inside the try: a full disk can create the file and fail the write.
    writeFileSync(temp, JSON.stringify(holder));
    linkSync(temp, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(temp, { force: true });
  }
}

/** Takes the lock once; returns false while a live holder keeps it. */
function tryAcquire(path: string, holder: LockHolder, options: LockOptions): boolean {
  if (tryCreate(path, holder)) return true;
  const current = readHolder(path);
  if (!isStale(current)) return false;
  // Re-read right before removing to narrow the window in which two openers
  // both judge the same lock stale and one removes the other's fresh lock.
  const again = readHolder(path);
  if (JSON.stringify(again) !== JSON.stringify(current)) return false;
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  // A holder that died may have died writing a lock: its temp file is litter.
  removeDeadWritersTemps(path);
  if (!tryCreate(path, holder)) return false;
  options.onStaleTakeover?.(current);
  return true;
}

/**
 * How long `wait: true` waits for a holder. An assumption, the ceiling of
 * the longest Retry-After ibatch waits out (contract/limits.ts): a holder
 * still at work after that is more likely stuck than slow, and a nightly
 * `--wait` must not pile up behind it for ever.
 */
export const LONGEST_LOCK_WAIT_MS = LONGEST_RETRY_AFTER_MS;

export async function acquireLock(path: string, options: LockOptions = {}): Promise<HeldLock> {
  const holder: LockHolder = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: Date.now(),
    ...(options.journal !== undefined ? { journal: options.journal } : {}),
  };
  const refuse =
    options.refuse ??
    ((at: string, current: LockHolder | undefined) =>
      new JournalLockedError(at, current, options.job));
  const wait = options.wait ?? false;
  const deadline = Date.now() + (wait === true ? LONGEST_LOCK_WAIT_MS : wait === false ? 0 : wait);
  const interval = options.retryIntervalMs ?? 200;
  makeFolderSync(dirname(path));
  for (let waited = false; ; waited = true) {
    options.signal?.throwIfAborted();
    if (tryAcquire(path, holder, options)) break;
    if (Date.now() + interval > deadline) throw refuse(path, readHolder(path));
    if (options.onWait && (!waited || logIsQuiet())) {
      options.onWait(readHolder(path));
      // Counted even when the caller logs through a logger of its own.
      noteLogLine();
    }
    // Abortable: Ctrl-C ends the wait at once, with the signal's reason.
    await sleep(interval, options.signal);
  }
  let released = false;
  return {
    path,
    holder,
    release() {
      if (released) return;
      released = true;
      releaseOwn(path, holder);
    },
  };
}

/** Removes the lock at `path` if `holder` still holds it (a takeover may have replaced it). */
function releaseOwn(path: string, holder: LockHolder): void {
  const current = readHolder(path);
  if (current?.pid === holder.pid && current.startedAt === holder.startedAt) {
    try {
      unlinkSync(path);
    } catch {
      // Already gone: nothing to release.
    }
  }
}

/** How often `withLockSync` looks again while a live holder keeps the lock. */
const SYNC_RETRY_MS = 5;

/**
 * Runs `critical` holding the lock at `path` (the same lock file and stale
 * rule as `acquireLock`), synchronously: for a short critical section in code
 * that is synchronous itself (a manifest rewrite), so nothing else of this
 * process runs meanwhile. Waits up to `waitMs` for a live holder, then throws
 * `refuse(holder)`; `onWait` is told whenever the log has been quiet
 * (shared/waits.ts), since no timer of this process runs meanwhile.
 */
export function withLockSync<T>(
  path: string,
  critical: () => T,
  options: {
    readonly waitMs: number;
    readonly refuse: (holder: LockHolder | undefined) => Error;
    readonly onWait?: (holder: LockHolder | undefined, waitedMs: number) => void;
  },
): T {
  const holder: LockHolder = { pid: process.pid, hostname: hostname(), startedAt: Date.now() };
  const deadline = Date.now() + options.waitMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  makeFolderSync(dirname(path));
  while (!tryAcquire(path, holder, {})) {
    const now = Date.now();
    if (now + SYNC_RETRY_MS > deadline) throw options.refuse(readHolder(path));
    if (options.onWait && logIsQuiet(now)) {
      options.onWait(readHolder(path), now - holder.startedAt);
      noteLogLine();
    }
    Atomics.wait(pause, 0, 0, SYNC_RETRY_MS);
  }
  try {
    return critical();
  } finally {
    releaseOwn(path, holder);
  }
}
