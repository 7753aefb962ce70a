/**
 * The rows the chaos verdict reads from the journal, from either store: a
 * SQLite file (read-only) or a PostgreSQL journal's URL (`?schema=`), by the
 * same SQL (SQLite's insertion order `rowid` is PostgreSQL's `seq` column).
 */
import { existsSync } from 'node:fs';
import Database from 'better-sqlite3';
import pg from 'pg';
import { isJournalUrl } from '../../src/journal/index.js';

export interface ItemRow {
  run_id: string;
  item_key: string;
  source_item_key: string | null;
  kind: string;
  model_id: string | null;
  state: string;
  charged_credits: number;
  refunded_credits: number;
}
export interface AttemptRow {
  run_id: string;
  item_key: string;
  attempt_no: number;
  idempotency_key: string;
  request_json: string;
  state: string;
  error: string | null;
}
export interface OutputRow {
  run_id: string;
  item_key: string;
  n: number;
  generation_id: string | null;
  url: string | null;
  file: string | null;
  sha256: string | null;
  state: string;
}

export interface JournalRows {
  readonly integrity: string;
  readonly runs: { run_id: string; status: string }[];
  readonly items: ItemRow[];
  readonly attempts: AttemptRow[];
  readonly outputs: OutputRow[];
}

const RUNS = 'SELECT run_id, status FROM runs ORDER BY created_at, rowid';
const ITEMS = 'SELECT * FROM items';
// An attempt's request stored '' is its item's (journal migration 8); attempts
// and outputs name their item by its row (migration 15: SQLite's rowid,
// PostgreSQL's seq), and a missing item leaves their keys null.
const ATTEMPTS = (row: string) => `SELECT i.run_id, i.item_key, a.attempt_no, a.idempotency_key,
    a.state, a.error,
    CASE WHEN a.request_json = '' THEN i.request_json ELSE a.request_json END AS request_json
  FROM attempts a LEFT JOIN items i ON i.${row} = a.item_row
  ORDER BY i.run_id, i.item_key, a.attempt_no`;
const OUTPUTS = (row: string) => `SELECT i.run_id, i.item_key, o.*
  FROM outputs o LEFT JOIN items i ON i.${row} = o.item_row`;

export async function readJournalRows(journal: string): Promise<JournalRows> {
  if (isJournalUrl(journal)) return readPostgres(journal);
  const db = new Database(journal, { readonly: true, fileMustExist: true });
  try {
    return {
      integrity: String(db.pragma('integrity_check', { simple: true })),
      runs: db.prepare(RUNS).all() as JournalRows['runs'],
      items: db.prepare(ITEMS).all() as ItemRow[],
      attempts: db.prepare(ATTEMPTS('rowid')).all() as AttemptRow[],
      outputs: db.prepare(OUTPUTS('rowid')).all() as OutputRow[],
    };
  } finally {
    db.close();
  }
}

async function readPostgres(journal: string): Promise<JournalRows> {
  return withPostgres(journal, async (all) => ({
    integrity: 'ok',
    runs: await all(RUNS),
    items: await all(ITEMS),
    attempts: await all(ATTEMPTS('seq')),
    outputs: await all(OUTPUTS('seq')),
  }));
}

const SUBMITTED = `SELECT generation_ids_json AS ids FROM attempts WHERE state = 'submitted'`;

/**
 * Generation ids of the journal's attempts still open (submitted, outcome
 * not recorded), from either store; none while the journal does not exist yet.
 */
export async function submittedGenerationIds(journal: string): Promise<string[]> {
  let rows: { ids: string }[];
  if (isJournalUrl(journal)) {
    try {
      rows = await withPostgres(journal, (all) => all<{ ids: string }>(SUBMITTED));
    } catch (error) {
      // undefined_table: no run has migrated the schema yet.
      if ((error as { code?: unknown }).code === '42P01') return [];
      throw error;
    }
  } else {
    if (!existsSync(journal)) return [];
    const db = new Database(journal, { readonly: true, fileMustExist: true });
    try {
      rows = db.prepare(SUBMITTED).all() as { ids: string }[];
    } finally {
      db.close();
    }
  }
  return rows.flatMap((r) => JSON.parse(r.ids) as string[]);
}

/** Runs `read` on a client of the PostgreSQL journal at `journal` (its `?schema=` as the search path). */
async function withPostgres<T>(
  journal: string,
  read: (all: <R>(sql: string) => Promise<R[]>) => Promise<T>,
): Promise<T> {
  const url = new URL(journal);
  const schema = url.searchParams.get('schema');
  url.searchParams.delete('schema');
  const client = new pg.Client({
    connectionString: url.toString(),
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
    // Big integers as numbers, as SQLite gives them.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 || oid === 1700
          ? Number
          : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  await client.connect();
  try {
    return await read(
      async <R>(sql: string) => (await client.query(sql.replace(/\browid\b/g, 'seq'))).rows as R[],
    );
  } finally {
    await client.end();
  }
}
