import {
  type AttemptRecord,
  attemptRecordSchema,
  OPEN_ATTEMPT_STATES,
  sqlStates,
} from '../records.js';
import type { JournalDb } from '../sql.js';
import { ATTEMPT_COLUMNS } from './columns.js';

export function getAttempt(
  j: JournalDb,
  runId: string,
  itemKey: string,
  attemptNo: number,
): AttemptRecord | undefined {
  const row = j
    .stmt(
      `SELECT ${ATTEMPT_COLUMNS} FROM attempts
       WHERE run_id = ? AND item_key = ? AND attempt_no = ?`,
    )
    .get(runId, itemKey, attemptNo);
  return row === undefined ? undefined : attemptRecordSchema.parse(row);
}

/**
 * The item's unfinished attempt (`intent`: re-send with the same key;
 * `submitted`: keep polling), if any.
 */
export function getOpenAttempt(
  j: JournalDb,
  runId: string,
  itemKey: string,
): AttemptRecord | undefined {
  const row = j
    .stmt(
      `SELECT ${ATTEMPT_COLUMNS} FROM attempts
       WHERE run_id = ? AND item_key = ? AND state IN (${sqlStates(OPEN_ATTEMPT_STATES)})
       ORDER BY attempt_no DESC LIMIT 1`,
    )
    .get(runId, itemKey);
  return row === undefined ? undefined : attemptRecordSchema.parse(row);
}

/** Every unfinished attempt of a run: what a resume must finish first. */
export function listOpenAttempts(j: JournalDb, runId: string): AttemptRecord[] {
  return j
    .stmt(
      `SELECT ${ATTEMPT_COLUMNS} FROM attempts
       WHERE run_id = ? AND state IN (${sqlStates(OPEN_ATTEMPT_STATES)}) ORDER BY created_at, rowid`,
    )
    .all(runId)
    .map((row) => attemptRecordSchema.parse(row));
}

/** All attempts of one item, oldest first. */
export function listAttempts(j: JournalDb, runId: string, itemKey: string): AttemptRecord[] {
  return j
    .stmt(
      `SELECT ${ATTEMPT_COLUMNS} FROM attempts WHERE run_id = ? AND item_key = ?
       ORDER BY attempt_no`,
    )
    .all(runId, itemKey)
    .map((row) => attemptRecordSchema.parse(row));
}

/**
 * Every attempt of a run by item, each item's oldest first: one query where
 * a rebuild of 100,000 items' rows would make 100,000 (`listAttempts`).
 */
export function listRunAttempts(j: JournalDb, runId: string): Map<string, AttemptRecord[]> {
  const byItem = new Map<string, AttemptRecord[]>();
  const rows = j
    .stmt(`SELECT ${ATTEMPT_COLUMNS} FROM attempts WHERE run_id = ? ORDER BY item_key, attempt_no`)
    .all(runId);
  for (const row of rows) {
    const attempt = attemptRecordSchema.parse(row);
    const list = byItem.get(attempt.itemKey);
    if (list) list.push(attempt);
    else byItem.set(attempt.itemKey, [attempt]);
  }
  return byItem;
}
