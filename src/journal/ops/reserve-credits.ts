import { type JournalDb, runServiceSql } from '../sql.js';

/** Float sums of credits must not refuse an exact fit. */
const EPSILON = 1e-9;

export type ReserveResult =
  // No total on success: summing a run's items on every reservation made each
  // create cost time that grew with the run (issue 17.2); nobody read it.
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Which cap refused: the job's `budget` (all its runs) or this invocation's `--max-spend`. */
      readonly cap: 'budget' | 'max-spend';
      /** The cap's value in credits. */
      readonly limit: number;
      /** Credits already committed against that cap (reserved + charged - refunded). */
      readonly committed: number;
      /** What the refused reservation asked for. */
      readonly requested: number;
    };

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
 * The runs whose spend counts against a run's budget: every run of its job
 * against the same service (`budget` caps the job, all its runs together).
 * The service, not the key: a rotated API key is the same account, and the
 * service shows no account id to tell two accounts apart.
 */
const JOB_RUNS = `SELECT o.run_id FROM runs o, runs me
  WHERE me.run_id = @runId AND o.job_name = me.job_name
    AND ${runServiceSql('o')} = ${runServiceSql('me')}`;

const COMMITTED = 'COALESCE(SUM(reserved_credits + charged_credits - refunded_credits), 0)';

/**
 * Adds `amount` to an item's reservation unless the job's committed credits
 * over all its runs would then pass its budget, or the run's would pass the
 * invocation's cap. The checks and the update are one SQL statement, so no two
 * reservations can both squeeze under a cap.
 */
export function reserveCredits(
  j: JournalDb,
  runId: string,
  itemKey: string,
  amount: number,
  cap?: RunSpendCap,
): ReserveResult {
  if (!(amount >= 0)) throw new RangeError(`Expected \`amount\` >= 0, got ${amount}`);
  const update = j
    .stmt(
      `UPDATE items SET reserved_credits = reserved_credits + @amount, updated_at = @now
       WHERE run_id = @runId AND item_key = @itemKey
         AND (
           (SELECT budget FROM runs WHERE run_id = @runId) IS NULL
           OR (SELECT ${COMMITTED} FROM items WHERE run_id IN (${JOB_RUNS})) + @amount
              <= (SELECT budget FROM runs WHERE run_id = @runId) + ${EPSILON}
         )
         AND (
           @runLimit IS NULL
           OR (SELECT ${COMMITTED} FROM items WHERE run_id = @runId) + @amount
              <= @runLimit + ${EPSILON}
         )`,
    )
    .run({ runId, itemKey, amount, now: j.now(), runLimit: cap?.runLimit ?? null });
  if (update.changes === 1) return { ok: true };
  const budget = j.stmt('SELECT budget FROM runs WHERE run_id = ?').pluck().get(runId) as
    | number
    | null
    | undefined;
  const jobCommitted = jobCommittedCredits(j, runId);
  if (budget !== undefined && budget !== null && jobCommitted + amount > budget + EPSILON) {
    return { ok: false, cap: 'budget', limit: budget, committed: jobCommitted, requested: amount };
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
  return j.stmt(`SELECT ${COMMITTED} FROM items WHERE run_id = ?`).pluck().get(runId) as number;
}

/** reserved + charged - refunded over every run of the run's job on its service (what `budget` caps). */
export function jobCommittedCredits(j: JournalDb, runId: string): number {
  return j
    .stmt(`SELECT ${COMMITTED} FROM items WHERE run_id IN (${JOB_RUNS})`)
    .pluck()
    .get({ runId }) as number;
}
