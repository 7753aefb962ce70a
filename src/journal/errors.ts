/** Typed errors of the journal. */
import { dirname } from 'node:path';
import { EXIT, IbatchError, redact } from '../shared/index.js';

export interface LockHolder {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: number;
  /** The journal the holder writes (the output folder's lock records it). */
  readonly journal?: string;
}

/** `2024-05-01 14:03:07` in local time: what a person compares with their clock. */
function localTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/**
 * Who holds a lock, as a refusal names it: `process 123 on host (since
 * 2024-05-01 14:03:07, 40 s ago)`, and the journal it writes when it said.
 */
export function describeHolder(holder: LockHolder | undefined, now = Date.now()): string {
  if (!holder) return 'another process';
  const ago = Math.max(0, Math.round((now - holder.startedAt) / 1000));
  const journal = holder.journal === undefined ? '' : ` with the journal ${holder.journal}`;
  return `process ${holder.pid} on ${holder.hostname}${journal} (since ${localTime(holder.startedAt)}, ${ago} s ago)`;
}

/**
 * A lock's holder as log fields: under `holder`, never as the line's own
 * `pid`/`hostname` (a log line's are the logging process's).
 */
export function holderLogFields(holder: LockHolder | undefined) {
  return {
    holder: {
      pid: holder?.pid,
      hostname: holder?.hostname,
      ...(holder?.journal === undefined ? {} : { journal: holder.journal }),
    },
  };
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
    const who = describeHolder(holder, now);
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

/** What stopped a journal write: the disk, its permissions, its hardware, or its path. */
export type JournalFaultKind =
  | 'full'
  | 'read-only'
  | 'io'
  | 'cannot-open'
  | 'unreachable'
  // A PostgreSQL role without a privilege the journal needs: the fix is a grant, not a file mode.
  | 'denied';

/**
 * The journal could not be written (or opened for writing): a full disk, a
 * read-only file, folder or file system, an I/O error, a path that cannot
 * hold a file. The journal is written ahead of every request, so
 * such a failure loses nothing: every commit before it stands and nothing was
 * sent that the journal does not know. At `open` nothing was sent at all
 * (exit 2, like the other refusals to open a journal); during a `run` the run
 * stops and resumes once the disk is fixed (exit 4, resumable: the nearest
 * code of the interface, see docs/faults.md).
 */
export class JournalWriteError extends IbatchError {
  readonly kind: JournalFaultKind;
  /** The journal file (as given, resolved). */
  readonly path: string;
  readonly phase: 'open' | 'run';

  constructor(kind: JournalFaultKind, path: string, phase: 'open' | 'run', cause: unknown) {
    const detail = cause instanceof Error ? cause.message : String(cause);
    const code = (cause as { code?: unknown } | undefined)?.code;
    const what = `${FAULT_WORDS[kind]} (${typeof code === 'string' && !detail.startsWith(code) ? `${code}: ` : ''}${detail})`;
    const fix = FAULT_FIX[kind](path, dirname(path));
    const message =
      phase === 'open'
        ? `Cannot write the journal ${path}: ${what}. Nothing was sent to the service, and nothing ` +
          `recorded before was lost. ${fix}, then run the same command again.`
        : `The journal ${path} could not be written: ${what}. The run stopped there. Nothing was ` +
          'lost: every step recorded before it stands, and nothing was sent that the journal does ' +
          `not know. ${fix}, then run the same command again to resume: nothing is paid twice.`;
    // An unreachable PostgreSQL is resumable whenever it happens: the same
    // command works once the server is back.
    const exit = phase === 'open' && kind !== 'unreachable' ? EXIT.invalid : EXIT.unreachable;
    super('journal_unwritable', redact(message), exit, { cause });
    this.kind = kind;
    this.path = path;
    this.phase = phase;
  }
}

const FAULT_WORDS: Record<JournalFaultKind, string> = {
  full: 'the disk is full',
  'read-only': 'it is read-only',
  io: 'the disk reported an I/O error',
  'cannot-open': 'it cannot be opened',
  unreachable: 'PostgreSQL cannot be reached or refused the connection',
  denied: 'the role lacks a privilege it needs',
};

const FAULT_FIX: Record<JournalFaultKind, (path: string, dir: string) => string> = {
  full: (_path, dir) => `Free space on the disk that holds ${dir}`,
  'read-only': (path, dir) => `Make ${path} and its folder ${dir} writable`,
  io: (path, dir) =>
    `Check the disk that holds ${dir}, and that ${path} and the files beside it are writable`,
  'cannot-open': (_path, dir) => `Make sure ${dir} is a folder this user can write to`,
  unreachable: (path) =>
    `Check that the server of ${path} is up and reachable from here, and the role, password and sslmode`,
  denied: () =>
    'Give the role the privileges docs/journal.md ("PostgreSQL") lists: CREATE on the schema ' +
    '(and on the database, for a schema that does not exist yet) for the first run, which ' +
    "migrates it, or run that first run as the schema's owner; then USAGE on the schema, " +
    'SELECT, INSERT, UPDATE, DELETE on its tables, USAGE, SELECT on its sequences and EXECUTE ' +
    'on its functions',
};

/** `journal copy` into a journal that already holds one of the copied jobs: refused, nothing copied. */
export class JournalCopyConflictError extends IbatchError {
  constructor(target: string, jobs: readonly string[]) {
    super(
      'journal_copy_conflict',
      redact(
        `The journal ${target} already holds job ${jobs.map((j) => `\`${j}\``).join(', ')}: ` +
          'copying would mix two histories of one job, so nothing was copied.',
      ),
      EXIT.invalid,
    );
  }
}
