/**
 * A job's items over its runs on one service: what `run` and `plan` compare
 * the job file with (the desired state) to decide what is done, new, changed
 * or to retry. Only each key's latest record is kept: nothing else of the
 * history decides anything.
 */
import { ATTEMPT_STATE, ITEM_STATE, OPEN_ATTEMPT_STATES, sqlStates } from '../records.js';
import { type JournalDb, runServiceSql } from '../sql.js';
import { itemColumns, type NewItem } from './add-items.js';
import { ATTEMPTS, ITEM_ROW, ofItem } from './columns.js';

export interface ItemHistoryRow {
  readonly runId: string;
  readonly itemKey: string;
  readonly stepId: string;
  readonly requestHash: string;
  readonly state: string;
  /** For a `from:` item that succeeded: the source generation its winning attempt used. */
  readonly sourceGenerationId: string | null;
}

/**
 * The strings a record should hold for its key and request hash: equal ones
 * the caller already holds (a plan's items), or the record's own.
 */
export type HeldStrings = (
  itemKey: string,
  requestHash: string,
) => { readonly itemKey: string; readonly requestHash: string };

/**
 * The latest record of each key of a job's items in runs on `service` (its
 * base URL; a run recording none is on no service), by key in the order the
 * keys were first recorded.
 */
export function latestItems(
  j: JournalDb,
  jobName: string,
  service: string,
  held?: HeldStrings,
): Map<string, ItemHistoryRow> {
  // Oldest run first: a key's last row is its latest record.
  const rows = j
    .stmt(
      `SELECT i.run_id AS runId, i.item_key AS itemKey, i.step_id AS stepId,
         i.request_hash AS requestHash, i.state AS state,
         CASE WHEN i.source_item_key IS NULL THEN NULL ELSE (
           SELECT json_extract(
             CASE WHEN a.request_json = '' THEN i.request_json ELSE a.request_json END,
             '$.generationId') FROM attempts a
           WHERE a.item_row = i.rowid AND a.state = '${ATTEMPT_STATE.succeeded}'
           ORDER BY a.attempt_no DESC LIMIT 1) END AS sourceGenerationId
       FROM items i JOIN runs r ON r.run_id = i.run_id
       WHERE r.job_name = ? AND ${runServiceSql('r')} = ib_service(?)
       ORDER BY r.created_at, r.rowid`,
    )
    .iterate(jobName, service) as Iterable<ItemHistoryRow>;
  // Row by row, the values every row of a run repeats shared: a plan of a job
  // with many done items holds these rows, and a copy of each string per row
  // would multiply their memory.
  const shared = new Map<string, string>();
  const one = (text: string): string => {
    const known = shared.get(text);
    if (known !== undefined) return known;
    shared.set(text, text);
    return text;
  };
  const latest = new Map<string, ItemHistoryRow>();
  for (const row of rows) {
    // The caller's equal strings: the row's own die young instead of
    // outliving the read for as long as the plan holds the record.
    const { itemKey, requestHash } = held?.(row.itemKey, row.requestHash) ?? row;
    latest.set(itemKey, {
      runId: one(row.runId),
      itemKey,
      stepId: one(row.stepId),
      requestHash,
      state: one(row.state),
      sourceGenerationId: row.sourceGenerationId,
    });
  }
  return latest;
}

/**
 * The state of the item `itemKey` in run `runId` on `service` and how many
 * attempts it used; undefined when no run of that id on that service holds
 * it. One row by its primary key: adoption asks it of every row of a
 * manifest of 100,000 items.
 */
export function recordedItemState(
  j: JournalDb,
  runId: string,
  itemKey: string,
  service: string,
): { readonly state: string; readonly attemptsUsed: number } | undefined {
  return j
    .stmt(
      `SELECT i.state AS state, i.attempts_used AS attemptsUsed
       FROM items i JOIN runs r ON r.run_id = i.run_id
       WHERE i.run_id = ? AND i.item_key = ? AND ${runServiceSql('r')} = ib_service(?)`,
    )
    .get(runId, itemKey, service) as { state: string; attemptsUsed: number } | undefined;
}

/**
 * The keys of the items run `runId` on `service` shows succeeded: what
 * `recordedItemState` says of each of them, in one read. Adoption asks it
 * once per run a manifest names instead of once per row.
 */
export function succeededItemKeys(j: JournalDb, runId: string, service: string): Set<string> {
  // The run's service is compared once (an uncorrelated subquery), not per item.
  const rows = j
    .stmt(
      `SELECT i.item_key AS itemKey FROM items i
       WHERE i.run_id = @runId AND i.state = '${ITEM_STATE.succeeded}'
         AND EXISTS (SELECT 1 FROM runs r WHERE r.run_id = @runId
           AND ${runServiceSql('r')} = ib_service(@service))`,
    )
    .all({ runId, service }) as { itemKey: string }[];
  return new Set(rows.map((row) => row.itemKey));
}

/**
 * Each record of a job's items in runs on `service`, as (key, request hash):
 * the few bytes `plan` keeps of them while it scans the job (RecordedItems).
 */
export function eachItemRequestHash(
  j: JournalDb,
  jobName: string,
  service: string,
  onRecord: (itemKey: string, requestHash: string) => void,
): void {
  const rows = j
    .stmt(
      `SELECT i.item_key AS itemKey, i.request_hash AS requestHash
       FROM items i JOIN runs r ON r.run_id = i.run_id
       WHERE r.job_name = ? AND ${runServiceSql('r')} = ib_service(?)`,
    )
    .iterate(jobName, service) as Iterable<{ itemKey: string; requestHash: string }>;
  for (const row of rows) onRecord(row.itemKey, row.requestHash);
}

/**
 * Gives a not yet attempted item (or one waiting for its next attempt) the
 * request the job file now describes. An item with an open attempt keeps its
 * request: that attempt is finished as it was sent.
 */
export function replaceItemRequest(j: JournalDb, runId: string, item: NewItem): boolean {
  return j.transaction(() => replaceRequest(j, runId, item));
}

function replaceRequest(j: JournalDb, runId: string, item: NewItem): boolean {
  // An open attempt is finished as it was sent: nothing changes.
  const open = j
    .stmt(
      `SELECT EXISTS (SELECT 1 FROM ${ATTEMPTS} WHERE i.run_id = ? AND i.item_key = ?
         AND a.state IN (${sqlStates(OPEN_ATTEMPT_STATES)})) AS open`,
    )
    .get(runId, item.itemKey) as { open: number };
  if (open.open !== 0) return false;
  // Finished attempts that share the item's request (stored '', columns.ts)
  // keep the request they were sent with: it is written out first.
  j.stmt(
    `UPDATE attempts SET request_json = ${ofItem('request_json')},
       request_hash = ${ofItem('request_hash')}
     WHERE item_row = ${ITEM_ROW} AND (request_json = '' OR request_hash = '')`,
  ).run({ runId, itemKey: item.itemKey });
  const result = j
    .stmt(
      `UPDATE items SET label = @label, model_id = @modelId, kind = @kind, request_json = @request,
         request_hash = @requestHash, expected_outputs = @expectedOutputs, quoted_cost = NULL,
         source_item_key = @sourceItemKey, vars_json = @vars, updated_at = @now
       WHERE run_id = @runId AND item_key = @itemKey`,
    )
    .run({ runId, ...itemColumns(item), now: j.now() });
  return result.changes === 1;
}

/** Drops an item nothing was ever sent for (removed from the job file); true when dropped. */
export function removeUnattemptedItem(j: JournalDb, runId: string, itemKey: string): boolean {
  return (
    j
      .stmt('DELETE FROM items WHERE run_id = ? AND item_key = ? AND attempts_used = 0')
      .run(runId, itemKey).changes === 1
  );
}
