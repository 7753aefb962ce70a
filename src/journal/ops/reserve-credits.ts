import type { JournalDb } from '../sql.js';

/** Float sums of credits must not refuse an exact fit. */
const EPSILON = 1e-9;

export type ReserveResult =
  | { readonly ok: true; readonly committed: number }
  | {
      readonly ok: false;
      /** The run's budget. */
      readonly budget: number;
      /** Credits already committed (reserved + charged - refunded). */
      readonly committed: number;
      /** What the refused reservation asked for. */
      readonly requested: number;
    };

/**
 * Adds `amount` to an item's reservation unless the run's committed credits
 * (reserved + charged - refunded over all its items) would then pass its
 * budget. The check and the update are one SQL statement, so no two
 * reservations can both squeeze under the budget.
 */
export function reserveCredits(
  j: JournalDb,
  runId: string,
  itemKey: string,
  amount: number,
): ReserveResult {
  if (!(amount >= 0)) throw new RangeError(`Expected \`amount\` >= 0, got ${amount}`);
  const update = j
    .stmt(
      `UPDATE items SET reserved_credits = reserved_credits + @amount, updated_at = @now
       WHERE run_id = @runId AND item_key = @itemKey
         AND (
           (SELECT budget FROM runs WHERE run_id = @runId) IS NULL
           OR (SELECT COALESCE(SUM(reserved_credits + charged_credits - refunded_credits), 0)
               FROM items WHERE run_id = @runId) + @amount
              <= (SELECT budget FROM runs WHERE run_id = @runId) + ${EPSILON}
         )`,
    )
    .run({ runId, itemKey, amount, now: j.now() });
  const committed = committedCredits(j, runId);
  if (update.changes === 1) return { ok: true, committed };
  const budget = j.stmt('SELECT budget FROM runs WHERE run_id = ?').pluck().get(runId) as
    | number
    | null
    | undefined;
  if (budget === undefined || budget === null) {
    throw new Error(`No item ${itemKey} in run ${runId}`);
  }
  return { ok: false, budget, committed, requested: amount };
}

/** Drops an item's reservation (refund, failure, a refused create). */
export function releaseReservation(j: JournalDb, runId: string, itemKey: string): void {
  j.stmt(
    'UPDATE items SET reserved_credits = 0, updated_at = ? WHERE run_id = ? AND item_key = ?',
  ).run(j.now(), runId, itemKey);
}

/** reserved + charged - refunded over a run's items. */
export function committedCredits(j: JournalDb, runId: string): number {
  return j
    .stmt(
      `SELECT COALESCE(SUM(reserved_credits + charged_credits - refunded_credits), 0)
       FROM items WHERE run_id = ?`,
    )
    .pluck()
    .get(runId) as number;
}
