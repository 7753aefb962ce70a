/**
 * The handle every journal operation receives: the database plus a cache of
 * prepared statements keyed by their SQL text, so each op keeps its SQL
 * inline and still prepares it only once per connection.
 */
import type Database from 'better-sqlite3';
import { canonicalScope, canonicalServiceUrl } from '../shared/index.js';

export interface JournalDb {
  readonly db: Database.Database;
  /** The prepared statement for `sql`, prepared on first use. */
  stmt(sql: string): Database.Statement;
  /** The current time in ms since the epoch (injectable for tests). */
  now(): number;
}

export function createJournalDb(db: Database.Database, now: () => number = Date.now): JournalDb {
  registerServiceFunctions(db);
  const cache = new Map<string, Database.Statement>();
  return {
    db,
    now,
    stmt(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = db.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
  };
}

/**
 * SQL functions over the one definition of a service's identity
 * (src/shared/service-url.ts): `ib_service(url)` and `ib_scope(scope)`.
 * Journals written before it store the base URL as it was given, so reads
 * compare canonical spellings (migration 10 also rewrites the stored ones).
 * Registered on every connection before it migrates or reads.
 */
export function registerServiceFunctions(db: Database.Database): void {
  const text = (f: (s: string) => string) => (value: unknown) =>
    typeof value === 'string' ? f(value) : value;
  db.function('ib_service', { deterministic: true }, text(canonicalServiceUrl));
  db.function('ib_scope', { deterministic: true }, text(canonicalScope));
}

/**
 * The service a run spent on, canonical (`alias` names the runs row; '' for
 * runs older than the field), as SQL over its `options_json`: budget, resume
 * and "done" are per service, whatever spelling of it each run was given.
 * `serviceOfRun` (records.ts) reads it from a run record. Compare it with
 * `ib_service(?)` so a caller's spelling does not matter either.
 */
export const runServiceSql = (alias: string): string =>
  `ib_service(COALESCE(json_extract(${alias}.options_json, '$.service'), ''))`;
