/**
 * Migration 15 on both stores: attempts and outputs name their item by its
 * row, not its run id and key. A version-14 journal keeps every record
 * (read the same before, read-only, and after), its items keep their rows
 * and order, and a copy into another journal, whose rows differ, maps each
 * attempt and output to its item's row there. On SQLite the row is the
 * items' INTEGER PRIMARY KEY. On a real PostgreSQL server too.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { type Journal, openJournal } from '../../src/journal/index.js';
import { MIGRATIONS } from '../../src/journal/migrations/index.js';
import { POSTGRES_MIGRATIONS } from '../../src/journal/postgres/schema.js';
import { registerServiceFunctions } from '../../src/journal/sql.js';
import { tempDir } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';

const server = postgresForFile();

/**
 * Version-14 rows: two runs of one job (the same keys in both), items whose
 * insertion order is not their key order, an attempt per item (one sent
 * with its own request), outputs of two, a retried item, and a gap in the
 * rows (an item never attempted, removed).
 */
const ROWS = `
INSERT INTO runs (run_id, job_name, job_path, job_hash, status, created_at, updated_at)
  VALUES ('r1', 'j', '/j', 'h', 'completed', 1, 1), ('r2', 'j', '/j', 'h', 'interrupted', 2, 2);
INSERT INTO items (run_id, item_key, step_id, kind, request_json, request_hash, state,
    attempts_used, charged_credits, created_at, updated_at)
  VALUES ('r1', 'zeta', 'shots', 'image', '{"p":"z"}', 'hz', 'succeeded', 1, 2, 1, 1),
         ('r1', 'dropped', 'shots', 'image', '{"p":"d"}', 'hd', 'pending', 0, 0, 1, 1),
         ('r1', 'alpha', 'shots', 'image', '{"p":"a"}', 'ha', 'succeeded', 2, 4, 1, 1),
         ('r2', 'zeta', 'shots', 'image', '{"p":"z"}', 'hz', 'submitted', 1, 2, 2, 2),
         ('r2', 'alpha', 'shots', 'image', '{"p":"a"}', 'ha', 'pending', 0, 0, 2, 2);
INSERT INTO attempts (run_id, item_key, attempt_no, idempotency_key, request_json, request_hash,
    state, generation_ids_json, charged_cost, created_at, submitted_at)
  VALUES ('r1', 'zeta', 1, 'k-r1-zeta-1', '', '', 'succeeded', '["g1"]', 2, 1, 1),
         ('r1', 'alpha', 1, 'k-r1-alpha-1', '{"p":"old"}', 'hold', 'failed', '[]', 2, 1, 1),
         ('r1', 'alpha', 2, 'k-r1-alpha-2', '', '', 'succeeded', '["g2"]', 2, 2, 2),
         ('r2', 'zeta', 1, 'k-r2-zeta-1', '', '', 'submitted', '["g3"]', 2, 3, 3);
DELETE FROM items WHERE run_id = 'r1' AND item_key = 'dropped';
INSERT INTO outputs (run_id, item_key, n, generation_id, url, kind, state, file, sha256, bytes,
    created_at, updated_at)
  VALUES ('r1', 'zeta', 1, 'g1', 'https://cdn/g1.png', 'image', 'downloaded', 'shots/zeta.png', 's1', 10, 1, 1),
         ('r1', 'alpha', 1, 'g2', 'https://cdn/g2.png', 'image', 'downloaded', 'shots/alpha.png', 's2', 20, 2, 2);
`;

/** Everything the ops read of attempts and outputs, through the journal. */
function records(journal: Journal) {
  return {
    attempts: ['r1', 'r2'].map((run) => journal.listAttempts(run)),
    open: journal.listOpenAttempts('r2'),
    outputs: ['r1', 'r2'].map((run) => journal.listOutputs(run)),
    files: journal.listOutputFiles('r1'),
    byGeneration: journal.findDownloadedOutput('g2', 'r2'),
    items: journal.listItems('r1').map((i) => [i.itemKey, i.chargedCredits]),
  };
}

/** A SQLite journal at version 14 holding `ROWS`. */
function sqliteAt14(): string {
  const path = join(tempDir('journal'), 'journal.db');
  const old = new Database(path);
  registerServiceFunctions(old); // migration 10 calls them
  for (const m of MIGRATIONS.slice(0, 14)) old.exec(m.sql);
  old.pragma('user_version = 14');
  old.exec(ROWS);
  old.close();
  return path;
}

async function readOnlyRecords(path: string) {
  const reader = await openJournal(path, { readonly: true });
  try {
    return records(reader);
  } finally {
    reader.close();
  }
}

describe('migration 15 on SQLite: attempts and outputs by item row', () => {
  it('a version-14 journal reads the same read-only and migrated; rows, steps and triggers kept; a copy maps rows', async () => {
    const path = sqliteAt14();
    const before = await readOnlyRecords(path);
    expect(before.attempts[0]?.map((a) => [a.itemKey, a.attemptNo, a.request])).toEqual([
      ['alpha', 1, { p: 'old' }],
      ['alpha', 2, { p: 'a' }],
      ['zeta', 1, { p: 'z' }],
    ]);
    expect(before.open.map((a) => a.idempotencyKey)).toEqual(['k-r2-zeta-1']);
    expect(before.byGeneration).toMatchObject({ runId: 'r1', itemKey: 'alpha', n: 1 });
    const firstRows = (db: Database.Database) =>
      db.prepare('SELECT run_id, step_id, first_row FROM run_steps ORDER BY run_id').raw().all();
    const old = new Database(path, { readonly: true });
    const stepsBefore = firstRows(old);
    old.close();

    const journal = await openJournal(path);
    expect(records(journal)).toEqual(before);
    journal.close();

    const raw = new Database(path);
    // Rows kept their numbers, gap included, and their order; the keys live in `items` alone.
    expect(raw.prepare('SELECT item_row, item_key FROM items ORDER BY rowid').raw().all()).toEqual([
      [1, 'zeta'],
      [3, 'alpha'],
      [4, 'zeta'],
      [5, 'alpha'],
    ]);
    expect(firstRows(raw)).toEqual(stepsBefore);
    const columns = (table: string) =>
      raw.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[];
    // The rowid SQLite keeps: its documentation lets a VACUUM renumber an implicit one.
    const itemRow = raw.prepare(
      "SELECT pk, type FROM pragma_table_info('items') WHERE name = 'item_row'",
    );
    expect(itemRow.get()).toEqual({ pk: 1, type: 'INTEGER' });
    expect(columns('attempts')).not.toContain('item_key');
    expect(columns('outputs')).not.toContain('run_id');
    // The counts' triggers came back with the rebuilt table.
    raw.exec("DELETE FROM items WHERE run_id = 'r2' AND item_key = 'alpha'");
    raw.close();

    const migrated = await openJournal(path);
    const copy = await openJournal(join(tempDir('copy'), 'journal.db'));
    try {
      expect(migrated.progressByStep('r2')).toEqual([
        { stepId: 'shots', total: 1, states: { submitted: 1 } },
      ]);
      // The copy's items are rows 1-3, the source's 1, 3, 4: each attempt and
      // output goes to its item's row there.
      migrated.copyInto(copy);
      expect(records(copy)).toEqual(records(migrated));
      expect(records(copy).attempts[0]?.map((a) => a.idempotencyKey)).toEqual([
        'k-r1-alpha-1',
        'k-r1-alpha-2',
        'k-r1-zeta-1',
      ]);
    } finally {
      migrated.close();
      copy.close();
    }
  });
});

describePostgres('migration 15 on PostgreSQL', () => {
  it('a version-14 journal reads the same after the migration, its keys in items alone', async () => {
    const location = await server.newSchema();
    const schema = new URL(location).searchParams.get('schema');
    const inSchema = (sql: string) => server.query(`SET search_path TO ${schema};\n${sql}`);
    for (const m of POSTGRES_MIGRATIONS.filter((m) => m.version <= 14)) await inSchema(m.sql);
    await inSchema(`
      CREATE TABLE ibatch_schema (version integer NOT NULL);
      INSERT INTO ibatch_schema VALUES (14);
      ${ROWS}`);

    const expected = await readOnlyRecords(sqliteAt14());

    const journal = await openJournal(location);
    try {
      expect(records(journal)).toEqual(expected);
    } finally {
      journal.close();
    }
    const columns = await server.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
        WHERE table_schema = $1 AND table_name IN ('attempts', 'outputs')
          AND column_name IN ('run_id', 'item_key', 'item_row')`,
      [schema],
    );
    expect(columns.map((c) => `${c.table_name}.${c.column_name}`).sort()).toEqual([
      'attempts.item_row',
      'outputs.item_row',
    ]);
  });
});
