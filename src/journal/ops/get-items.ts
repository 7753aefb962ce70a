import {
  type ItemRecord,
  type ItemState,
  itemRecordSchema,
  sqlStates,
  TERMINAL_ITEM_STATES,
} from '../records.js';
import { type JournalDb, type Soon, soonRecords } from '../sql.js';
import { ITEM_COLUMNS } from './columns.js';

export function getItem(j: JournalDb, runId: string, itemKey: string): ItemRecord | undefined {
  const row = j
    .stmt(`SELECT ${ITEM_COLUMNS} FROM items WHERE run_id = ? AND item_key = ?`)
    .get(runId, itemKey);
  return row === undefined ? undefined : itemRecordSchema.parse(row);
}

/** The records of `itemKeys` the run holds, by key: one read for a page of items. */
export function getItemsOfKeys(
  j: JournalDb,
  runId: string,
  itemKeys: readonly string[],
): Map<string, ItemRecord> {
  const rows = j
    .stmt(
      `SELECT ${ITEM_COLUMNS} FROM items
       WHERE run_id = ? AND item_key IN (SELECT value FROM json_each(?))`,
    )
    .all(runId, JSON.stringify(itemKeys));
  const records = new Map<string, ItemRecord>();
  for (const row of rows) {
    const record = itemRecordSchema.parse(row);
    records.set(record.itemKey, record);
  }
  return records;
}

/** Which of `itemKeys` are items of the run in `state`: one read for a page of items. */
export function itemKeysInState(
  j: JournalDb,
  runId: string,
  itemKeys: readonly string[],
  state: ItemState,
): string[] {
  return j
    .stmt(
      `SELECT item_key FROM items
       WHERE run_id = ? AND item_key IN (SELECT value FROM json_each(?)) AND state = ?`,
    )
    .pluck()
    .all(runId, JSON.stringify(itemKeys), state) as string[];
}

export interface ItemFilter {
  /** Only items in one of these states. */
  readonly states?: readonly ItemState[];
  readonly stepId?: string;
  /** Only items after this one (insertion order): with `limit`, a page of a long run. */
  readonly after?: string;
  readonly limit?: number;
}

/** A run's items in expansion (insertion) order, optionally filtered. */
export function listItems(j: JournalDb, runId: string, filter: ItemFilter = {}): ItemRecord[] {
  return listItemsSoon(j, runId, filter).take();
}

/** `listItems`, sent now to be taken later (`Statement.allSoon`). */
export function listItemsSoon(
  j: JournalDb,
  runId: string,
  filter: ItemFilter = {},
): Soon<ItemRecord[]> {
  const states = filter.states ?? null;
  const paged = filter.after !== undefined || filter.limit !== undefined;
  // States asked for that the run's counts show no item in (a run's
  // failures, mostly none) end the read before it walks the run's items.
  // A page walks the table in rowid order from where the last one ended, the
  // first from the run's first row (`+run_id` keeps SQLite off the run's
  // index, which would sort the whole run for every page, a cost that grows
  // with the run for each page). Read the pages in one `Journal.snapshot`: an `after` item
  // deleted meanwhile would start the walk again.
  const rows = j
    .stmt(
      `SELECT ${ITEM_COLUMNS} FROM items
       WHERE ${paged ? '+run_id' : 'run_id'} = @runId
         AND (@stepId IS NULL OR step_id = @stepId)
         AND (@states IS NULL OR state IN (SELECT value FROM json_each(@states)))
         AND (@states IS NULL OR EXISTS (SELECT 1 FROM run_step_states c
           WHERE c.run_id = @runId AND c.items > 0
             AND c.state IN (SELECT value FROM json_each(@states))))
         ${
           paged
             ? `AND rowid > coalesce(
              (SELECT rowid FROM items WHERE run_id = @runId AND item_key = @after),
              (SELECT min(rowid) FROM items WHERE run_id = @runId) - 1, 0)`
             : ''
         }
       ORDER BY rowid ${paged ? 'LIMIT @limit' : ''}`,
    )
    .allSoon({
      runId,
      stepId: filter.stepId ?? null,
      states: states && JSON.stringify(states),
      ...(paged ? { after: filter.after ?? null, limit: filter.limit ?? -1 } : {}),
    });
  return soonRecords(rows, itemRecordSchema);
}

/** What a resume compares of a run's item with the job file: no request, no money. */
export interface RunItemHash {
  readonly itemKey: string;
  readonly stepId: string;
  readonly requestHash: string;
}

/**
 * Each item of a run as (key, step, request hash), in insertion order: a
 * resume of a 100,000-item run compares these with the job file and reads
 * whole only the records that differ.
 */
export function eachRunItemHash(
  j: JournalDb,
  runId: string,
  onItem: (item: RunItemHash) => void,
): void {
  // Iterated, a page at a time: all of a long run's rows at once, held by
  // PostgreSQL's worker and then by this thread, set a resume's peak memory
  // at its start (docs/benchmarks.md, ninth round).
  const rows = j
    .stmt(
      `SELECT item_key AS itemKey, step_id AS stepId, request_hash AS requestHash
       FROM items WHERE run_id = ? ORDER BY rowid`,
    )
    .iterate(runId) as Iterable<RunItemHash>;
  for (const row of rows) onItem(row);
}

/**
 * The keys of a run's first `limit` items not ended, in insertion order: what
 * a resume drives first. The walk goes in rowid order (`+run_id`, as
 * `listItems`' pages) and stops at the limit, however many items ended before.
 */
export function firstUnendedItemKeys(j: JournalDb, runId: string, limit: number): string[] {
  const rows = j
    .stmt(
      `SELECT item_key AS itemKey FROM items
       WHERE +run_id = ? AND state NOT IN (${sqlStates(TERMINAL_ITEM_STATES)})
       ORDER BY rowid LIMIT ?`,
    )
    .all(runId, limit) as { itemKey: string }[];
  return rows.map((row) => row.itemKey);
}
