/** Typed errors of the journal. */
import { EXIT, IbatchError } from '../shared/index.js';

export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: number;
}

/**
 * Another process holds the journal. Exit 2: nothing was spent and the user
 * has to act (wait for the other run, or pass `--wait`).
 */
export class JournalLockedError extends IbatchError {
  readonly holder: LockHolder | undefined;
  readonly lockPath: string;

  constructor(lockPath: string, holder: LockHolder | undefined) {
    const who = holder
      ? `process ${holder.pid} on ${holder.hostname} (since ${new Date(holder.startedAt).toISOString()})`
      : 'another process';
    super(
      'journal_locked',
      `The journal is in use by ${who}: only one run at a time per journal. ` +
        `Wait for it to finish, or pass --wait to wait for it (lock file: ${lockPath}).`,
      EXIT.invalid,
    );
    this.holder = holder;
    this.lockPath = lockPath;
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
