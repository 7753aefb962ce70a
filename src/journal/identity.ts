/**
 * Which file a journal path names, and where its locks live. Every spelling
 * of one journal (relative or absolute, `x/../journal.db`, a symlink) must be
 * one lock, or two processes resume one run and pay twice. So
 * the lock is keyed by the resolved file, never by the path as given: the
 * file is created first if needed (O_CREAT without O_EXCL, so two racing
 * openers end up with the same inode), then `realpath`ed and `stat`ed.
 *
 * Hard links cannot be canonicalised by path, and SQLite derives its `-wal`
 * and `-shm` names from the path it was given: two names of one inode would
 * mean two WALs over one database, i.e. corruption. A journal with more than
 * one link is therefore refused (a symlink is the safe way to share one).
 */
import { closeSync, lstatSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { canonicalPath, makeFolderSync, sha256Hex } from '../shared/index.js';
import { JournalLinkedError } from './errors.js';

export interface JournalFile {
  /** The canonical path (symlinks resolved): what the database is opened with. */
  readonly path: string;
  readonly dev: number;
  readonly ino: number;
}

/** Creates the journal file if missing and returns its canonical identity. */
export function prepareJournalFile(path: string): JournalFile {
  const given = resolve(path);
  makeFolderSync(dirname(given));
  // An empty file is a valid empty SQLite database; opening with 'a' follows
  // a dangling symlink and creates its target.
  try {
    closeSync(openSync(given, 'a'));
  } catch (error) {
    // A symlink to a journal whose folder does not exist yet: create it there.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || !lstatSync(given).isSymbolicLink()) {
      throw error;
    }
    return prepareJournalFile(resolve(dirname(given), readlinkSync(given)));
  }
  const real = realpathSync(given);
  const stat = statSync(real);
  if (stat.nlink > 1) throw new JournalLinkedError(real, stat.nlink);
  return { path: real, dev: stat.dev, ino: stat.ino };
}

/**
 * Readable and collision-free: `job-<slug>-<hash>.lock` (two names never
 * share a file). The output folder's lock of a job has the same name.
 */
export function lockFileName(job: string | undefined): string {
  if (job === undefined) return 'journal.lock';
  const slug = job.replace(/[^A-Za-z0-9_.-]+/g, '_').slice(0, 40);
  const hash = sha256Hex(job).slice(0, 12);
  return `job-${slug}-${hash}.lock`;
}

/**
 * The lock file of one job in a journal (`job` undefined: a writer that runs
 * no job, e.g. a library user or a test), in `<real journal>.locks/`.
 */
export function lockPathFor(journalPath: string, job?: string): string {
  return join(`${canonicalPath(journalPath)}.locks`, lockFileName(job));
}

/**
 * Every path that belongs to the journal at `journalPath`: the database, the
 * files SQLite keeps beside it (`-wal`, `-shm`, `-journal`) and the lock
 * folder. Nothing else may ever be written there.
 */
export function journalFiles(journalPath: string): string[] {
  const db = canonicalPath(journalPath);
  return [db, `${db}-wal`, `${db}-shm`, `${db}-journal`, `${db}.locks`];
}
