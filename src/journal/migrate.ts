/** Brings a journal's schema to the latest version, tracked in `PRAGMA user_version`. */
import type Database from 'better-sqlite3';
import { JournalVersionError } from './errors.js';
import { LATEST_SCHEMA_VERSION, MIGRATIONS, OLDEST_READABLE_VERSION } from './migrations/index.js';

export function schemaVersion(db: Database.Database): number {
  return Number(db.pragma('user_version', { simple: true }));
}

/**
 * Applies every migration newer than the database, each in its own
 * transaction together with its `user_version` bump, so a crash mid-way leaves
 * a consistent, resumable schema. Returns the versions applied.
 *
 * Two writers (two jobs) may open one fresh journal at once: the version is
 * read again inside each IMMEDIATE transaction (which holds the write lock),
 * so the second opener skips what the first applied instead of failing.
 */
export function migrate(db: Database.Database, path: string): number[] {
  const current = schemaVersion(db);
  if (current > LATEST_SCHEMA_VERSION) {
    throw newerThanSupported(path, current);
  }
  const applied: number[] = [];
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    const ran = db
      .transaction(() => {
        if (schemaVersion(db) >= migration.version) return false;
        db.exec(migration.sql);
        db.pragma(`user_version = ${migration.version}`);
        return true;
      })
      .immediate();
    if (ran) applied.push(migration.version);
  }
  return applied;
}

export function newerThanSupported(path: string, current: number): JournalVersionError {
  return new JournalVersionError(
    `The journal ${path} has schema version ${current}, newer than this ibatch supports ` +
      `(${LATEST_SCHEMA_VERSION}). Upgrade ibatch or use another --journal.`,
  );
}

/** For read-only opens, which cannot migrate (an older version whose reads are unchanged is read as it is). */
export function assertCurrentSchema(db: Database.Database, path: string): void {
  assertReadableVersion(schemaVersion(db), path);
}

/** A journal at `current` can be read by this ibatch as it is (both stores). */
export function assertReadableVersion(current: number, path: string): void {
  if (current > LATEST_SCHEMA_VERSION) {
    throw newerThanSupported(path, current);
  }
  if (current < OLDEST_READABLE_VERSION) {
    throw new JournalVersionError(
      `The journal ${path} has schema version ${current} but this ibatch reads version ` +
        `${LATEST_SCHEMA_VERSION}; run \`ibatch run\` once to upgrade it.`,
    );
  }
}
