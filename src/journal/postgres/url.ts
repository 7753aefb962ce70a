/**
 * A PostgreSQL journal's address: `postgres://USER[:PASSWORD]@HOST[:PORT]/DB`
 * with optional `?schema=NAME` (several teams in one database) and the
 * usual libpq parameters (`sslmode`...), which node-postgres honours. The
 * password may also come from PGPASSWORD (node-postgres reads it) or
 * ~/.pgpass (the journal's worker looks it up at login, worker.ts) when the
 * URL has none. What is ever shown of the address is
 * `display`: the URL without its password.
 */
import { UsageError } from '../../shared/index.js';

export interface JournalUrl {
  /** The connection string node-postgres gets (`schema` removed). */
  readonly connectionString: string;
  /** The schema the journal's tables live in; undefined: the role's default (`public`). */
  readonly schema: string | undefined;
  /** The address without its password: the journal's name in messages. */
  readonly display: string;
  /** The password the URL carries, if any (registered with the redaction). */
  readonly password: string | undefined;
}

/** Whether a `--journal` value names a PostgreSQL journal rather than a file. */
export const isJournalUrl = (value: string): boolean => /^postgres(ql)?:\/\//i.test(value);

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** A PostgreSQL journal's URL as it may be shown or recorded: without its password. */
export const journalDisplayName = (value: string): string => parseJournalUrl(value).display;

export function parseJournalUrl(value: string): JournalUrl {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      'Expected --journal to be a file or postgres://USER@HOST:PORT/DB, got a postgres address that is not a URL',
    );
  }
  const schema = url.searchParams.get('schema') ?? undefined;
  if (schema !== undefined && !SCHEMA_NAME.test(schema)) {
    throw new UsageError(
      `Expected the journal's ?schema= to be a PostgreSQL name (letters, digits, _), got \`${schema}\``,
    );
  }
  url.searchParams.delete('schema');
  const password = url.password === '' ? undefined : decodeURIComponent(url.password);
  const connectionString = url.toString();
  const shown = new URL(value);
  shown.password = '';
  return { connectionString, schema, display: shown.toString(), password };
}
