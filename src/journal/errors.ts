/** Typed errors of the journal. */
import { EXIT, IbatchError } from '../shared/index.js';

export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: number;
}

/** `2024-05-01 14:03:07` in local time: what a person compares with their clock. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * Another process is running the same job on the journal (or, for a writer
 * without a job, holds the journal). Exit 2: nothing was spent and the user
 * has to act (wait for the other run, or pass `--wait`).
 */
export class JournalLockedError extends IbatchError {
  readonly holder: LockHolder | undefined;
  readonly lockPath: string;
  /** The job whose lock is held; undefined for the journal-wide writer lock. */
  readonly job: string | undefined;

  constructor(lockPath: string, holder: LockHolder | undefined, job?: string, now = Date.now()) {
    const who = holder
      ? `process ${holder.pid} on ${holder.hostname} (since ${localTime(holder.startedAt)}, ` +
        `${Math.max(0, Math.round((now - holder.startedAt) / 1000))} s ago)`
      : 'another process';
    const what = job === undefined ? 'The journal is in use' : `The job "${job}" is being run`;
    const rule =
      job === undefined
        ? 'only one writer at a time per journal'
        : 'only one run at a time per job';
    super(
      'journal_locked',
      `${what} by ${who}: ${rule}. ` +
        `Wait for it to finish, or pass --wait to wait for it (lock file: ${lockPath}).`,
      EXIT.invalid,
    );
    this.holder = holder;
    this.lockPath = lockPath;
    this.job = job;
  }
}

/**
 * The journal file has several hard links. SQLite names its WAL after the
 * path it opens, so two names of one database would get two WALs and corrupt
 * it; and no path-based lock could tell the names are one journal.
 */
export class JournalLinkedError extends IbatchError {
  constructor(path: string, links: number) {
    super(
      'journal_linked',
      `The journal ${path} has ${links} hard links: two names of one journal would each get ` +
        'their own write-ahead log and lock, and corrupt it. Remove the extra link; ' +
        'use a symlink to reach one journal from several places.',
      EXIT.invalid,
    );
  }
}

/** The journal's schema is newer than this ibatch, or cannot be migrated read-only. */
export class JournalVersionError extends IbatchError {
  constructor(message: string) {
    super('journal_version', message, EXIT.invalid);
  }
}

/** A read-only open of a journal that does not exist. */
export class JournalMissingError extends IbatchError {
  constructor(path: string) {
    super('journal_missing', `No journal at ${path}: nothing has run with it yet.`, EXIT.invalid);
  }
}
