/** The committed journal schema must be what the migrations produce today. */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { LATEST_SCHEMA_VERSION } from '../../src/journal/index.js';
import { SQLITE_SCHEMA_FILE, sqliteSchemaText } from '../../src/journal/schema-text.js';
import { repoPath } from '../helpers/index.js';

describe(SQLITE_SCHEMA_FILE, () => {
  it('is what every migration produces on an empty database (regenerate: npm run journal:schema)', () => {
    const committed = readFileSync(repoPath(...SQLITE_SCHEMA_FILE.split('/')), 'utf8');
    expect(committed).toBe(sqliteSchemaText());
  });

  it('names the latest schema version and builds a database on its own', () => {
    const text = sqliteSchemaText();
    expect(text).toContain(`PRAGMA user_version = ${LATEST_SCHEMA_VERSION};`);
    const db = new Database(':memory:');
    try {
      db.exec(text);
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .pluck()
        .all();
      expect(tables).toEqual(expect.arrayContaining(['runs', 'items', 'attempts', 'outputs']));
      expect(db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    } finally {
      db.close();
    }
  });
});
