/**
 * Brings a PostgreSQL journal to the latest model, tracked in the table
 * `ibatch_schema` (one row: its version). Each migration runs in one
 * transaction with its version bump, under a transaction-scoped advisory
 * lock, so two runners opening one fresh journal at once apply it once.
 */
import { JournalMissingError, JournalVersionError } from '../errors.js';
import { assertReadableVersion, newerThanSupported, readOnlyShimsAfter } from '../migrate.js';
import { LATEST_SCHEMA_VERSION } from '../migrations/index.js';
import { POSTGRES_MIGRATIONS } from './schema.js';
import type { SyncPostgres } from './sync-client.js';

/** The version of the journal in the connection's schema; 0 when it has none. */
export function schemaVersion(client: SyncPostgres): number {
  const table = client.query("SELECT to_regclass('ibatch_schema') IS NOT NULL AS present").rows[0];
  if (!table?.present) return 0;
  return Number(client.query('SELECT version FROM ibatch_schema').rows[0]?.version ?? 0);
}

/**
 * Creates the schema if asked for one and the store's own tables (its
 * version, the job locks' name tags), then applies every migration newer
 * than the journal. All under one advisory lock: two runners opening one
 * fresh journal would otherwise race on CREATE ... IF NOT EXISTS.
 */
export function migratePostgres(
  client: SyncPostgres,
  schema: string | undefined,
  display: string,
): number[] {
  const applied: number[] = [];
  // A journal already at the latest model needs no CREATE: so a role with
  // read/write grants only opens it (CREATE ... IF NOT EXISTS checks the
  // privilege before it looks whether the object exists).
  if (schemaVersion(client) === LATEST_SCHEMA_VERSION) return applied;
  const locked = (work: () => void) => {
    client.query('BEGIN');
    try {
      // One key for every journal's migrations: they are rare and short.
      client.query("SELECT pg_advisory_xact_lock(hashtextextended('ibatch-migrate', 0))");
      work();
      client.query('COMMIT');
    } catch (error) {
      try {
        client.query('ROLLBACK');
      } catch {
        // The connection is gone: the server rolls back on its own.
      }
      throw error;
    }
  };
  locked(() => {
    if (schema !== undefined) client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    client.query('CREATE TABLE IF NOT EXISTS ibatch_schema (version integer NOT NULL)');
    client.query(
      `CREATE TABLE IF NOT EXISTS ibatch_job_locks (
         job text PRIMARY KEY, hostname text NOT NULL, pid bigint NOT NULL, since bigint NOT NULL)`,
    );
    const current = schemaVersion(client);
    if (current > LATEST_SCHEMA_VERSION) throw newerThanSupported(display, current);
  });
  for (const migration of POSTGRES_MIGRATIONS) {
    locked(() => {
      if (schemaVersion(client) >= migration.version) return;
      client.query(migration.sql);
      client.query('DELETE FROM ibatch_schema');
      client.query('INSERT INTO ibatch_schema (version) VALUES ($1)', [migration.version]);
      applied.push(migration.version);
    });
  }
  return applied;
}

/** For read-only opens: the journal exists and its model is one this ibatch reads. */
export function assertPostgresSchema(client: SyncPostgres, display: string): void {
  const current = schemaVersion(client);
  if (current === 0) throw new JournalMissingError(display);
  assertReadableVersion(current, display);
  // A reader cannot derive what a newer migration's reads need here (SQLite
  // does, in its temporary schema): the next run upgrades the journal.
  if (readOnlyShimsAfter(current).length > 0) {
    throw new JournalVersionError(
      `The journal ${display} has schema version ${current}; run \`ibatch run\` once to upgrade it.`,
    );
  }
}
