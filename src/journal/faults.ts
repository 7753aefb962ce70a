/**
 * Which failures of SQLite or of the file system are the journal's disk
 * failing, as opposed to a bug or a damaged database: those
 * become a `JournalWriteError` naming the journal, what failed and the fix.
 * Anything else is left as it is.
 */
import { IbatchError } from '../shared/index.js';
import { type JournalFaultKind, JournalWriteError } from './errors.js';
import { PostgresConnectionError } from './postgres/sync-client.js';

// SQLite's result codes, extended ones included (`SQLITE_IOERR_WRITE`,
// `SQLITE_READONLY_DBMOVED`...): better-sqlite3 puts them in `code`.
const SQLITE_KINDS: ReadonlyArray<readonly [string, JournalFaultKind]> = [
  ['SQLITE_FULL', 'full'],
  ['SQLITE_READONLY', 'read-only'],
  ['SQLITE_PERM', 'read-only'],
  ['SQLITE_IOERR', 'io'],
  ['SQLITE_CANTOPEN', 'cannot-open'],
];

// Errors of node:fs while preparing the journal's file and lock folder.
const ERRNO_KINDS: Readonly<Record<string, JournalFaultKind>> = {
  ENOSPC: 'full',
  EDQUOT: 'full',
  EACCES: 'read-only',
  EPERM: 'read-only',
  EROFS: 'read-only',
  EIO: 'io',
  ENOTDIR: 'cannot-open',
  EISDIR: 'cannot-open',
  // `mkdir -p` through a component that is a file.
  EEXIST: 'cannot-open',
  ELOOP: 'cannot-open',
  ENAMETOOLONG: 'cannot-open',
};

// PostgreSQL's SQLSTATEs for the same failures, on the server's side.
const SQLSTATE_KINDS: Readonly<Record<string, JournalFaultKind>> = {
  '53100': 'full', // disk_full
  '53200': 'full', // out_of_memory
  '25006': 'read-only', // read_only_sql_transaction (a standby)
  '42501': 'denied', // insufficient_privilege
  '58030': 'io', // io_error
};

function faultKindOf(error: unknown): JournalFaultKind | undefined {
  if (error instanceof IbatchError) return undefined;
  if (error instanceof PostgresConnectionError) return 'unreachable';
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return undefined;
  if (/^[0-9A-Z]{5}$/.test(code) && SQLSTATE_KINDS[code]) return SQLSTATE_KINDS[code];
  if (code.startsWith('SQLITE_')) {
    return SQLITE_KINDS.find(([prefix]) => code === prefix || code.startsWith(`${prefix}_`))?.[1];
  }
  return ERRNO_KINDS[code];
}

/** `error` as a JournalWriteError when it is the journal's disk failing; undefined otherwise. */
export function journalFault(
  error: unknown,
  path: string,
  phase: JournalWriteError['phase'],
): JournalWriteError | undefined {
  if (error instanceof JournalWriteError) return error;
  const kind = faultKindOf(error);
  return kind ? new JournalWriteError(kind, path, phase, error) : undefined;
}
