/**
 * The handle every journal operation receives: the database plus a cache of
 * prepared statements keyed by their SQL text, so each op keeps its SQL
 * inline and still prepares it only once per connection.
 */
import type Database from 'better-sqlite3';

export interface JournalDb {
  readonly db: Database.Database;
  /** The prepared statement for `sql`, prepared on first use. */
  stmt(sql: string): Database.Statement;
  /** The current time in ms since the epoch (injectable for tests). */
  now(): number;
}

export function createJournalDb(db: Database.Database, now: () => number = Date.now): JournalDb {
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
 * The service base URL a run spent on, as SQL over its `options_json`
 * (`alias` names the runs row; '' for runs older than the field): budget,
 * resume and "done" are per service. `serviceOfRun` (records.ts) reads it
 * from a run record.
 */
export const runServiceSql = (alias: string): string =>
  `COALESCE(json_extract(${alias}.options_json, '$.service'), '')`;
