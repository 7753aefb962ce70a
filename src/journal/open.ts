/**
 * Opening a journal: lock, pragmas, migrations.
 *
 * Locks are per job (`job`): different jobs share one journal and run at the
 * same time, each writer in its own short transactions; `busy_timeout` makes
 * one wait for the other's commit instead of failing with SQLITE_BUSY. It is
 * set before anything else, since switching a fresh file to WAL and
 * migrating it take the database's write lock too.
 *
 * Durability: WAL with `synchronous = FULL`. WAL + NORMAL already survives
 * kill -9, but a power loss or OS crash may roll back the last commits;
 * losing a committed attempt intent could make us send a create the journal
 * does not know about, or forget a charge. FULL fsyncs the WAL on every
 * commit and still commits far faster than the service accepts requests
 * (`npm run bench -- journalThroughput`), so safety costs nothing that matters.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';
import type { LockHolder } from './errors.js';
import { JournalMissingError, JournalWriteError } from './errors.js';
import { journalFault } from './faults.js';
import { applyFullDiskHook } from './full-disk-hook.js';
import { lockPathFor, prepareJournalFile } from './identity.js';
import { Journal } from './journal.js';
import { acquireLock } from './lock.js';
import { assertCurrentSchema, migrate, schemaVersion } from './migrate.js';
import { openPostgresJournal } from './postgres/open.js';
import { isJournalUrl } from './postgres/url.js';
import { sqliteStore } from './sql.js';

/** The defaults of {@link OpenJournalOptions} that are values, written once. */
export const JOURNAL_OPEN_DEFAULTS = {
  busyTimeoutMs: 5000,
} as const;

export interface OpenJournalOptions {
  /**
   * When another process holds the journal: false fails at once with
   * `JournalLockedError`; true waits for it; a number waits that many ms.
   * @default false
   */
  readonly wait?: boolean | number;
  /**
   * Open for reading only (`status`, `report`): takes no lock, never
   * migrates, fails if the file does not exist.
   * @default false
   */
  readonly readonly?: boolean;
  /**
   * The job this writer runs: the lock is that job's, so other jobs may use
   * the journal at the same time. Without it the writer takes the journal's
   * own writer lock (one such writer at a time).
   * @default none: the journal's own writer lock
   */
  readonly job?: string;
  /** Aborts a `wait`. @default none */
  readonly signal?: AbortSignal;
  /** Told once when `wait` starts waiting for a live holder (log it). @default none */
  readonly onLockWait?: (holder: LockHolder | undefined) => void;
  /** Told when the lock of a dead process was taken over (log it). @default none */
  readonly onStaleLock?: (holder: LockHolder | undefined) => void;
  /** How long SQLite waits for another connection's write before failing. @default 5000 */
  readonly busyTimeoutMs?: number;
  /** Clock for record timestamps (tests). @default Date.now */
  readonly now?: () => number;
}

/**
 * SQLite's own default page cache (2 MB), not the 16 MB better-sqlite3 sets:
 * a reader (plan, status, report) reads most pages once, and a run's reads
 * and writes find the pages it does not keep in the OS's file cache. On a
 * long run the larger cache costs more memory than the CPU it saves
 * (docs/benchmarks.md, scaleRun).
 */
const SQLITE_PAGE_CACHE = 'cache_size = -2000';

/** `path`: a journal file, or a PostgreSQL journal's `postgres://` URL (postgres/url.ts). */
export async function openJournal(
  path: string,
  options: OpenJournalOptions = {},
): Promise<Journal> {
  if (isJournalUrl(path)) return openPostgresJournal(path, options);
  const fullPath = resolve(path);
  if (options.readonly) {
    if (!existsSync(fullPath)) throw new JournalMissingError(fullPath);
    const db = new Database(fullPath, { readonly: true, fileMustExist: true });
    try {
      db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? JOURNAL_OPEN_DEFAULTS.busyTimeoutMs}`);
      db.pragma(SQLITE_PAGE_CACHE);
      assertCurrentSchema(db, fullPath);
    } catch (error) {
      db.close();
      throw error;
    }
    return new Journal(sqliteStore(db, options.now), fullPath, undefined);
  }
  try {
    return await openWriter(fullPath, options);
  } catch (error) {
    // A path that cannot hold the journal, a read-only file or folder, a full
    // disk: said as such, before anything is sent.
    throw openFault(error, fullPath) ?? error;
  }
}

/**
 * Whether the journal file at `path` holds no history a reader could read:
 * no file, an empty one, or a database never migrated (schema 0: what is
 * left after its `-wal` file was deleted following a `kill -9`). The writer
 * (`run`) makes a journal of it; a reader (`plan`) reads it as no journal
 * yet instead of refusing it. Asked through `openJournalIfAny`, the one
 * test of "is there a journal here" for both stores (on PostgreSQL: a
 * schema never migrated): never look for a file instead.
 */
function holdsNoJournal(path: string): boolean {
  const fullPath = resolve(path);
  if (!existsSync(fullPath) || statSync(fullPath).size === 0) return true;
  // SQLite gives the -wal and -shm files it makes the journal's own mode: a
  // read-only journal opened here would leave them read-only after the user
  // made the journal writable again. Such a journal holds one; its open reports it.
  if (!writable(fullPath)) return false;
  let db: Database.Database | undefined;
  try {
    db = new Database(fullPath, { readonly: true, fileMustExist: true });
    return schemaVersion(db) === 0;
  } catch {
    // Not a database: the reader's open names the problem.
    return false;
  } finally {
    db?.close();
  }
}

/**
 * The journal at `path` opened for reading, or undefined when it holds none
 * yet (`holdsNoJournal`). On PostgreSQL one connection both asks and reads,
 * where asking first and then opening took two, each a worker thread and a
 * login.
 */
export async function openJournalIfAny(
  path: string,
  options: Omit<OpenJournalOptions, 'readonly'> = {},
): Promise<Journal | undefined> {
  const reading = { ...options, readonly: true };
  if (!isJournalUrl(path)) return holdsNoJournal(path) ? undefined : openJournal(path, reading);
  try {
    return await openPostgresJournal(path, reading);
  } catch (error) {
    // Its reader's open refuses a schema never migrated so, and only that.
    if (error instanceof JournalMissingError) return undefined;
    throw error;
  }
}

function openFault(error: unknown, fullPath: string): JournalWriteError | undefined {
  const fault = journalFault(error, fullPath, 'open');
  // SQLite only says "unable to open" when a read-only folder keeps it from
  // creating the write-ahead log beside the journal: name the real cause.
  if (fault?.kind === 'cannot-open' && !writable(dirname(fullPath))) {
    return new JournalWriteError('read-only', fullPath, 'open', error);
  }
  return fault;
}

/**
 * Whether this process may write the journal at `path` (a PostgreSQL journal:
 * its grants answer at open). A reader must not open a SQLite journal it may
 * not write: SQLite would make its -wal and -shm files read-only too.
 */
export function journalWritable(path: string): boolean {
  return isJournalUrl(path) || writable(resolve(path));
}

/** Whether this process may write `file` (a file or a folder); an unknown answer counts as yes. */
function writable(file: string): boolean {
  try {
    accessSync(file, constants.W_OK);
    return true;
  } catch (error) {
    return !['EACCES', 'EPERM', 'EROFS'].includes(String((error as NodeJS.ErrnoException).code));
  }
}

async function openWriter(fullPath: string, options: OpenJournalOptions): Promise<Journal> {
  const file = prepareJournalFile(fullPath);
  const lock = await acquireLock(lockPathFor(file.path, options.job), {
    wait: options.wait ?? false,
    ...(options.job !== undefined ? { job: options.job } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.onStaleLock ? { onStaleTakeover: options.onStaleLock } : {}),
    ...(options.onLockWait ? { onWait: options.onLockWait } : {}),
  });
  let db: Database.Database | undefined;
  try {
    db = new Database(file.path);
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? JOURNAL_OPEN_DEFAULTS.busyTimeoutMs}`);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma(SQLITE_PAGE_CACHE);
    const store = sqliteStore(db, options.now);
    migrate(db, fullPath);
    applyFullDiskHook(db);
    return new Journal(store, fullPath, lock);
  } catch (error) {
    db?.close();
    lock.release();
    throw error;
  }
}
