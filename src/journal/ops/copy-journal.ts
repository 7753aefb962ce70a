/**
 * Copying a journal's history into another journal (SQLite to PostgreSQL and
 * back): every run of every job, with its items, attempts (so a resume sends
 * the same idempotency keys), outputs, events, reviews, deliveries, uploads
 * and trained influencers.
 *
 * Base tables only, in dependency order, items in their insertion order: the
 * target's own triggers (migration 11) build its per-step counts and spend
 * from the items as they arrive, so they agree with the copied rows by
 * construction, and steps keep the order they first appeared in. `events` and
 * `reviews` get the target's own ids, in the source's order (the ops read
 * them by id order only). Uploads and deliveries are keyed by what they name,
 * not by job: one the target already knows is kept as it is.
 */
import type { JournalDb } from '../sql.js';
import { itemRowOf, withItem } from './columns.js';

/**
 * Each table the copy moves, its columns (the same on both stores), and the
 * order its rows are read in: insertion order where the ops sort by it
 * (`rowid`, `id`), else the primary key (rows found by key only). A table
 * `ofItem` names its item by row (`item_row`), which differs between the
 * two journals: its rows are read with their item's run id and key, and
 * written with the target's row of that item.
 */
const TABLES: readonly {
  name: string;
  columns: string;
  order: string;
  keep?: boolean;
  ofItem?: true;
}[] = [
  {
    name: 'runs',
    columns: `run_id, job_name, job_path, job_hash, status, budget, options_json, not_before,
      created_at, updated_at, finished_at, tags_json`,
    order: 'rowid',
  },
  {
    name: 'items',
    columns: `run_id, item_key, step_id, label, model_id, kind, request_json, request_hash, state,
      attempts_used, expected_outputs, quoted_cost, reserved_credits, charged_credits,
      refunded_credits, error, not_before, source_item_key, created_at, updated_at, vars_json`,
    order: 'rowid',
  },
  {
    name: 'attempts',
    columns: `attempt_no, idempotency_key, request_json, request_hash, state,
      generation_ids_json, task_id, quoted_cost, charged_cost, refunded_credits, http_status,
      error, created_at, submitted_at, finished_at, training_id, influencer_id`,
    order: 'rowid',
    ofItem: true,
  },
  {
    name: 'outputs',
    columns: `n, generation_id, url, kind, model_id, file, sha256, bytes,
      content_type, state, error, created_at, updated_at`,
    order: 'rowid',
    ofItem: true,
  },
  {
    name: 'influencers',
    columns: `scope, job_name, local_id, config_hash, run_id, training_id, influencer_id, lora_url,
      status, idempotency_key, attempt_no, credits_cost, refunded, error, created_at, updated_at`,
    order: 'scope, job_name, local_id, config_hash',
  },
  {
    name: 'events',
    columns: 'run_id, at, type, item_key, message, data_json',
    order: 'id',
  },
  {
    name: 'reviews',
    columns: 'job_name, run_id, item_key, n, decision, reviewer, note, prompt, at',
    order: 'id',
  },
  {
    name: 'assets',
    columns: 'scope, sha256, mime_type, size, asset_url, uploaded_at',
    order: 'scope, sha256',
    keep: true,
  },
  {
    name: 'deliveries',
    columns: 'store, bucket, key, sha256, bytes, state, job_name, at',
    order: 'store, bucket, key',
    keep: true,
  },
];

/** The jobs `from` holds that `to` already holds too (a copy would mix two histories). */
export function jobsInBoth(from: JournalDb, to: JournalDb): string[] {
  const held = new Set(
    to
      .stmt('SELECT DISTINCT job_name FROM runs UNION SELECT DISTINCT job_name FROM influencers')
      .pluck()
      .all() as string[],
  );
  const source = from
    .stmt(
      'SELECT DISTINCT job_name FROM runs UNION SELECT DISTINCT job_name FROM influencers ORDER BY 1',
    )
    .pluck()
    .all() as string[];
  return source.filter((job) => held.has(job));
}

/** Rows copied per table, in copy order. */
export type CopiedRows = Record<string, number>;

/**
 * Copies every row of `from` into `to`, in one transaction of `to` (all or
 * nothing). The caller has checked `jobsInBoth` is empty and reads `from` in
 * one snapshot.
 */
export function copyJournalRows(from: JournalDb, to: JournalDb): CopiedRows {
  return to.transaction(() => {
    const copied: CopiedRows = {};
    let runIds: string[] = [];
    for (const table of TABLES) {
      const own = table.columns.split(',').map((c) => c.trim());
      const names = table.ofItem ? ['run_id', 'item_key', ...own] : own;
      const insert = to.stmt(
        table.ofItem
          ? `INSERT INTO ${table.name} (item_row, ${own.join(', ')})
             VALUES (${itemRowOf('?', '?')}, ${own.map(() => '?').join(', ')})`
          : `INSERT INTO ${table.name} (${own.join(', ')}) VALUES (${own.map(() => '?').join(', ')})` +
              (table.keep ? ' ON CONFLICT DO NOTHING' : ''),
      );
      const rows = from
        .stmt(
          table.ofItem
            ? `SELECT i.run_id AS run_id, i.item_key AS item_key, ${own.map((c) => `t.${c} AS ${c}`).join(', ')}
               FROM ${withItem(table.name, 't')} ORDER BY t.${table.order}`
            : `SELECT ${own.join(', ')} FROM ${table.name} ORDER BY ${table.order}`,
        )
        .all() as Record<string, unknown>[];
      const copy = () => {
        for (const row of rows) insert.run(...names.map((name) => row[name] ?? null));
      };
      if (table.name === 'runs') runIds = rows.map((row) => row.run_id as string);
      // The runs are new to `to` (the caller checked their jobs are), so
      // their items can be counted once, after they are all in.
      if (table.name === 'items' && to.itemsInBulk) to.itemsInBulk(runIds, copy);
      else copy();
      copied[table.name] = rows.length;
    }
    return copied;
  });
}
