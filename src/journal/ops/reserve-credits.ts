import { type JournalDb, runServiceSql } from '../sql.js';
import {
  type BudgetStanding,
  budgetStanding,
  COMMITTED_SQL,
  JOB_RUNS_OF_RUN_SQL,
} from './budget-standing.js';

/** Float sums of credits must not refuse an exact fit. */
const EPSILON = 1e-9;

/** What both refusals say. */
interface Refusal {
  readonly ok: false;
  /** The cap's value in credits. */
  readonly limit: number;
  /** Credits already committed against that cap (reserved + charged - refunded). */
  readonly committed: number;
  /** What the refused reservation asked for. */
  readonly requested: number;
}

export type ReserveResult =
  // No total on success: summing a run's items on every reservation made each
  // create cost time that grew with the run; nobody read it.
  | { readonly ok: true }
  /** The job's `budget` (all its runs) refused: where the job stands (budget-standing.ts). */
  | (Refusal & { readonly cap: 'budget'; readonly standing: BudgetStanding })
  /** This invocation's `--max-spend` refused. */
  | (Refusal & { readonly cap: 'max-spend' });

/** An absolute ceiling on one run's committed credits (what `--max-spend` leaves it). */
export interface RunSpendCap {
  /** The run may commit at most this much in total (its earlier spend included). */
  readonly runLimit: number;
  /** The invocation's cap, for the message. */
  readonly maxSpend: number;
  /** What the run had committed when the invocation began. */
  readonly baseline: number;
}

/**
 * Adds `amount` to an item's reservation unless the job's committed credits
 * over all its runs would then pass its budget, or the run's would pass the
 * invocation's cap. The checks and the update are one SQL statement, so no two
 * reservations can both squeeze under a cap. What is committed is read from
 * the per-step spend the journal keeps (`run_steps`, migration 11), a few
 * rows per run, not summed over every item: a budgeted 100,000-item run
 * would otherwise read all of its items again for each reservation.
 */
export function reserveCredits(
  j: JournalDb,
  runId: string,
  itemKey: string,
  amount: number,
  cap?: RunSpendCap,
): ReserveResult {
  if (!(amount >= 0)) throw new RangeError(`Expected \`amount\` >= 0, got ${amount}`);
  // `budget` caps the job over all its runs on this service (budget-standing.ts).
  const update = j
    .stmt(
      `UPDATE items SET reserved_credits = reserved_credits + @amount, updated_at = @now
       WHERE run_id = @runId AND item_key = @itemKey
         AND (
           (SELECT budget FROM runs WHERE run_id = @runId) IS NULL
           OR (SELECT ${COMMITTED_SQL} FROM run_steps WHERE run_id IN (${JOB_RUNS_OF_RUN_SQL})) + @amount
              <= (SELECT budget FROM runs WHERE run_id = @runId) + ${EPSILON}
         )
         AND (
           @runLimit IS NULL
           OR (SELECT ${COMMITTED_SQL} FROM run_steps WHERE run_id = @runId) + @amount
              <= @runLimit + ${EPSILON}
         )`,
    )
    .run({
      runId,
      itemKey,
      amount,
      now: j.now(),
      runLimit: cap?.runLimit ?? null,
    });
  if (update.changes === 1) return { ok: true };
  // Refused (or no such item): the run is read only to say why.
  const run = j
    .stmt(
      `SELECT job_name AS jobName, budget, ${runServiceSql('runs')} AS service FROM runs WHERE run_id = ?`,
    )
    .get(runId) as { jobName: string; budget: number | null; service: string } | undefined;
  if (!run) throw new Error(`No run ${runId}`);
  const standing = budgetStanding(j, { name: run.jobName, budget: run.budget }, run.service);
  if (standing.remaining !== null && amount > standing.remaining + EPSILON) {
    return {
      ok: false,
      cap: 'budget',
      limit: run.budget ?? 0,
      committed: standing.committed,
      requested: amount,
      standing,
    };
  }
  if (cap) {
    const spent = committedCredits(j, runId) - cap.baseline;
    return {
      ok: false,
      cap: 'max-spend',
      limit: cap.maxSpend,
      committed: spent,
      requested: amount,
    };
  }
  throw new Error(`No item ${itemKey} in run ${runId}`);
}

/** Drops an item's reservation (refund, failure, a refused create). */
export function releaseReservation(j: JournalDb, runId: string, itemKey: string): void {
  j.stmt(
    'UPDATE items SET reserved_credits = 0, updated_at = ? WHERE run_id = ? AND item_key = ?',
  ).run(j.now(), runId, itemKey);
}

/** reserved + charged - refunded over a run's items. */
export function committedCredits(j: JournalDb, runId: string): number {
  return j.stmt(`SELECT ${COMMITTED_SQL} FROM items WHERE run_id = ?`).pluck().get(runId) as number;
}
