import {
  type AttemptOutcome,
  type AttemptRecord,
  attemptOutcomeSchema,
  attemptRecordSchema,
  OPEN_ATTEMPT_STATES,
  sqlStates,
} from '../records.js';
import { type JournalDb, type Soon, soonRecords } from '../sql.js';
import { ATTEMPT_COLUMNS, ATTEMPT_COLUMNS_WRITTEN, ATTEMPTS } from './columns.js';

/**
 * What a write of one attempt hands back (`RETURNING`): its row as
 * `getAttempt` reads it, in the same round trip. Parse it with `attemptOf`.
 */
export const RETURNING_ATTEMPT = `RETURNING ${ATTEMPT_COLUMNS_WRITTEN}`;

/** The attempt of a `RETURNING_ATTEMPT` row, or undefined when the write matched none. */
export function attemptOf(row: unknown): AttemptRecord | undefined {
  return row === undefined ? undefined : attemptRecordSchema.parse(row);
}

export function getAttempt(
  j: JournalDb,
  runId: string,
  itemKey: string,
  attemptNo: number,
): AttemptRecord | undefined {
  const row = j
    .stmt(
      `SELECT ${ATTEMPT_COLUMNS} FROM ${ATTEMPTS}
       WHERE i.run_id = ? AND i.item_key = ? AND a.attempt_no = ?`,
    )
    .get(runId, itemKey, attemptNo);
  return attemptOf(row);
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
      `SELECT ${ATTEMPT_COLUMNS} FROM ${ATTEMPTS}
       WHERE i.run_id = ? AND i.item_key = ? AND a.state IN (${sqlStates(OPEN_ATTEMPT_STATES)})
       ORDER BY a.attempt_no DESC LIMIT 1`,
    )
    .get(runId, itemKey);
  return row === undefined ? undefined : attemptRecordSchema.parse(row);
}

/** Every unfinished attempt of a run: what a resume must finish first. */
export function listOpenAttempts(j: JournalDb, runId: string): AttemptRecord[] {
  return j
    .stmt(
      `SELECT ${ATTEMPT_COLUMNS} FROM ${ATTEMPTS}
       WHERE i.run_id = ? AND a.state IN (${sqlStates(OPEN_ATTEMPT_STATES)})
       ORDER BY a.created_at, a.rowid`,
    )
    .all(runId)
    .map((row) => attemptRecordSchema.parse(row));
}

/** All attempts of one item, oldest first; without `itemKey`, the whole run's, by item. */
export function listAttempts(j: JournalDb, runId: string, itemKey?: string): AttemptRecord[] {
  const rows =
    itemKey === undefined
      ? j
          .stmt(
            `SELECT ${ATTEMPT_COLUMNS} FROM ${ATTEMPTS} WHERE i.run_id = ?
             ORDER BY i.item_key, a.attempt_no`,
          )
          .all(runId)
      : j
          .stmt(
            `SELECT ${ATTEMPT_COLUMNS} FROM ${ATTEMPTS} WHERE i.run_id = ? AND i.item_key = ?
             ORDER BY a.attempt_no`,
          )
          .all(runId, itemKey);
  return rows.map((row) => attemptRecordSchema.parse(row));
}

/**
 * What a manifest row says of the attempts of some items of a run (a page
 * of it), by item, oldest first: no keys, times or hashes. `request` is the
 * attempt's own when it differs from its item's, else null (the item's:
 * the caller has it), which spares reading and parsing each item's request
 * a second time for 100,000 rows. Sent now to be taken later
 * (`Statement.allSoon`).
 */
export function listAttemptOutcomesOfItemsSoon(
  j: JournalDb,
  runId: string,
  itemKeys: readonly string[],
): Soon<AttemptOutcome[]> {
  const rows = j
    .stmt(
      `SELECT i.item_key AS itemKey, a.attempt_no AS attemptNo, a.state AS state,
         a.generation_ids_json AS generationIds, a.charged_cost AS chargedCost,
         a.refunded_credits AS refundedCredits, NULLIF(a.request_json, '') AS request
       FROM ${ATTEMPTS} WHERE i.run_id = ?
         AND i.item_key IN (SELECT value FROM json_each(?))
       ORDER BY i.item_key, a.attempt_no`,
    )
    .allSoon(runId, JSON.stringify(itemKeys));
  return soonRecords(rows, attemptOutcomeSchema);
}
