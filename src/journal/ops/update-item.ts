import { redactDeep } from '../../shared/index.js';
import type { ItemState } from '../records.js';
import type { JournalDb } from '../sql.js';

export interface ItemStateChange {
  readonly state: ItemState;
  /** Replaces the item's error text (null clears it; undefined keeps it). */
  readonly error?: string | null;
  /** Replaces the item's not-before time (null clears it; undefined keeps it). */
  readonly notBefore?: number | null;
}

/**
 * Moves an item to another state outside the attempt flow (skipped,
 * a retry back to pending...). Attempt transitions use the record-attempt ops,
 * which keep attempt, item and reservation consistent in one transaction.
 */
export function setItemState(
  j: JournalDb,
  runId: string,
  itemKey: string,
  change: ItemStateChange,
): void {
  j.stmt(
    `UPDATE items SET state = @state,
       error = CASE WHEN @keepError THEN error ELSE @error END,
       not_before = CASE WHEN @keepNotBefore THEN not_before ELSE @notBefore END,
       updated_at = @now
     WHERE run_id = @runId AND item_key = @itemKey`,
  ).run({
    runId,
    itemKey,
    state: change.state,
    keepError: change.error === undefined ? 1 : 0,
    // Error texts can quote the service: redacted here too, as a last line of defence.
    error: redactDeep(change.error ?? null),
    keepNotBefore: change.notBefore === undefined ? 1 : 0,
    notBefore: change.notBefore ?? null,
    now: j.now(),
  });
}

/** Records a fresh quote for an item (drift checks, re-plans). */
export function setItemQuote(
  j: JournalDb,
  runId: string,
  itemKey: string,
  quotedCost: number,
): void {
  j.stmt('UPDATE items SET quoted_cost = ?, updated_at = ? WHERE run_id = ? AND item_key = ?').run(
    quotedCost,
    j.now(),
    runId,
    itemKey,
  );
}
