import type { JournalDb } from '../sql.js';

/**
 * Recomputes an item's charged and refunded totals from its attempts, the
 * source of truth, so a replayed or repeated record never counts twice.
 */
export function refreshItemMoney(j: JournalDb, runId: string, itemKey: string): void {
  j.stmt(
    `UPDATE items SET
       charged_credits = (SELECT COALESCE(SUM(charged_cost), 0) FROM attempts
                          WHERE run_id = @runId AND item_key = @itemKey),
       refunded_credits = (SELECT COALESCE(SUM(refunded_credits), 0) FROM attempts
                           WHERE run_id = @runId AND item_key = @itemKey)
     WHERE run_id = @runId AND item_key = @itemKey`,
  ).run({ runId, itemKey });
}
