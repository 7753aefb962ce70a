/**
 * Migration 15: attempts and outputs name their item by its row number
 * (`item_row`, the item's rowid) instead of repeating its run id and key
 * (about 75 characters) in every row and in their primary keys, where
 * keys inserted out of order also leave pages part empty: on PostgreSQL
 * those copies were the largest share of a big journal's bytes that the
 * rows themselves did not need (figures: docs/benchmarks.md). The same
 * model is kept on both stores (postgres/schema.ts, version 15), so the
 * ops' SQL is one.
 *
 * The row number becomes `items.item_row INTEGER PRIMARY KEY`: a rowid
 * SQLite keeps (its documentation lets a VACUUM renumber an implicit one,
 * which would point attempts at other items). The three tables are rebuilt, the items keeping
 * their rowids, so the insertion order the ops sort by and each step's
 * `first_row` (migration 11) stay as they were. The new tables come in
 * under new names and take the old ones once the old tables are dropped
 * (SQLite rewrites a renamed table's references): a new attempts table
 * naming `items` while the old one stood would be checked against it.
 */
import { ITEM_COUNT_TRIGGERS } from './0011-run-step-counts.js';

const ITEM_COLUMNS = `run_id, item_key, step_id, label, model_id, kind, request_json, request_hash,
  state, attempts_used, expected_outputs, quoted_cost, reserved_credits, charged_credits,
  refunded_credits, error, not_before, source_item_key, created_at, updated_at, vars_json`;
/** An attempt's columns but its item's (both stores' version 15 copies them). */
export const ATTEMPT_ROW_COLUMNS = `attempt_no, idempotency_key, request_json, request_hash, state,
  generation_ids_json, task_id, quoted_cost, charged_cost, refunded_credits, http_status, error,
  created_at, submitted_at, finished_at, training_id, influencer_id`;
/** An output's columns but its item's. */
export const OUTPUT_ROW_COLUMNS = `n, generation_id, url, kind, model_id, file, sha256, bytes, content_type,
  state, error, created_at, updated_at`;

/**
 * Fills `<table>_v15` with `table`'s rows, in their order, each with its
 * item's row (`row`: SQLite's rowid, PostgreSQL's seq) for its run id and key.
 */
export const rowsByItemRow = (table: string, columns: string, row: string) => `
INSERT INTO ${table}_v15 (item_row, ${columns})
  SELECT i.${row}, ${columns
    .split(',')
    .map((c) => `t.${c.trim()}`)
    .join(', ')}
  FROM ${table} t JOIN items i ON i.run_id = t.run_id AND i.item_key = t.item_key
  ORDER BY t.${row};`;

/** What a read-only open of an older journal reads attempts and outputs as: with their item's row. */
const withItemRow = (table: string) => `
CREATE TEMP TABLE ${table} AS SELECT i.rowid AS item_row, t.* FROM main.${table} t
  JOIN main.items i ON i.run_id = t.run_id AND i.item_key = t.item_key ORDER BY t.rowid;`;

export const migration0015 = {
  version: 15,
  name: 'item-rows',
  readOnlyShim: withItemRow('attempts') + withItemRow('outputs'),
  sql: `
CREATE TABLE items_v15 (
  item_row INTEGER PRIMARY KEY,
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  item_key TEXT NOT NULL,
  step_id TEXT NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  model_id TEXT,
  kind TEXT NOT NULL,
  request_json TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  attempts_used INTEGER NOT NULL DEFAULT 0,
  expected_outputs INTEGER NOT NULL DEFAULT 1,
  quoted_cost REAL,
  reserved_credits REAL NOT NULL DEFAULT 0 CHECK (reserved_credits >= 0),
  charged_credits REAL NOT NULL DEFAULT 0,
  refunded_credits REAL NOT NULL DEFAULT 0,
  error TEXT,
  not_before INTEGER,
  source_item_key TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  vars_json TEXT,
  UNIQUE (run_id, item_key)
) STRICT;
INSERT INTO items_v15 (item_row, ${ITEM_COLUMNS})
  SELECT rowid, ${ITEM_COLUMNS} FROM items ORDER BY rowid;

CREATE TABLE attempts_v15 (
  item_row INTEGER NOT NULL REFERENCES items_v15(item_row) ON DELETE CASCADE,
  attempt_no INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  request_json TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  generation_ids_json TEXT NOT NULL DEFAULT '[]',
  task_id TEXT,
  quoted_cost REAL,
  charged_cost REAL NOT NULL DEFAULT 0,
  refunded_credits REAL NOT NULL DEFAULT 0,
  http_status INTEGER,
  error TEXT,
  created_at INTEGER NOT NULL,
  submitted_at INTEGER,
  finished_at INTEGER,
  training_id TEXT,
  influencer_id TEXT,
  PRIMARY KEY (item_row, attempt_no)
) STRICT;
${rowsByItemRow('attempts', ATTEMPT_ROW_COLUMNS, 'rowid')}

CREATE TABLE outputs_v15 (
  item_row INTEGER NOT NULL REFERENCES items_v15(item_row) ON DELETE CASCADE,
  n INTEGER NOT NULL,
  generation_id TEXT,
  url TEXT,
  kind TEXT NOT NULL,
  model_id TEXT,
  file TEXT,
  sha256 TEXT,
  bytes INTEGER,
  content_type TEXT,
  state TEXT NOT NULL DEFAULT 'pending',
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (item_row, n)
) STRICT;
${rowsByItemRow('outputs', OUTPUT_ROW_COLUMNS, 'rowid')}

DROP TABLE attempts;
DROP TABLE outputs;
DROP TABLE items;
ALTER TABLE items_v15 RENAME TO items;
ALTER TABLE attempts_v15 RENAME TO attempts;
ALTER TABLE outputs_v15 RENAME TO outputs;
CREATE INDEX outputs_by_generation ON outputs(generation_id);
${ITEM_COUNT_TRIGGERS}`,
} as const;
