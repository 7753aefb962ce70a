import type { ItemState } from '../records.js';
import type { JournalDb } from '../sql.js';

export interface Spend {
  /** Credits held by items not yet accepted by the service. */
  readonly reserved: number;
  /** Sum of the `creditsCost` the service charged. */
  readonly charged: number;
  readonly refunded: number;
  /** charged - refunded: what the run really cost. */
  readonly net: number;
  /** reserved + net: what counts against the budget. */
  readonly committed: number;
}

export interface StepSpend extends Spend {
  readonly stepId: string;
}

interface SpendRow {
  stepId: string;
  reserved: number;
  charged: number;
  refunded: number;
}

/** What credits really cost: charged minus refunded (the one definition of "net"). */
export const netCredits = (charged: number, refunded: number): number => charged - refunded;

/** Sums of fractional credits (per-second pricing) without float noise (0.1 + 0.2). */
export const tidyCredits = (n: number): number => Math.round(n * 1e6) / 1e6;

const toSpend = (row: Omit<SpendRow, 'stepId'>): Spend => {
  const net = netCredits(row.charged, row.refunded);
  return {
    reserved: row.reserved,
    charged: row.charged,
    refunded: row.refunded,
    net,
    committed: row.reserved + net,
  };
};

/** Spend of a whole run: a row per step, kept by the journal's triggers on items. */
export function spendSummary(j: JournalDb, runId: string): Spend {
  const row = j
    .stmt(
      `SELECT ROUND(COALESCE(SUM(reserved_credits), 0), 6) AS reserved,
         ROUND(COALESCE(SUM(charged_credits), 0), 6) AS charged,
         ROUND(COALESCE(SUM(refunded_credits), 0), 6) AS refunded
       FROM run_steps WHERE run_id = ?`,
    )
    .get(runId) as SpendRow;
  return toSpend(row);
}

/** Steps that hold at least one item (a step whose items were all removed keeps an empty row). */
const STEPS_WITH_ITEMS = `EXISTS (SELECT 1 FROM run_step_states c
  WHERE c.run_id = s.run_id AND c.step_id = s.step_id AND c.items > 0)`;

/** Spend per step, in the order steps first appear. */
export function spendByStep(j: JournalDb, runId: string): StepSpend[] {
  const rows = j
    .stmt(
      `SELECT step_id AS stepId, reserved_credits AS reserved,
         charged_credits AS charged, refunded_credits AS refunded
       FROM run_steps s WHERE run_id = ? AND ${STEPS_WITH_ITEMS} ORDER BY first_row`,
    )
    .all(runId) as SpendRow[];
  return rows.map((row) => ({ stepId: row.stepId, ...toSpend(row) }));
}

export interface StepProgress {
  readonly stepId: string;
  readonly total: number;
  /** Items per state; states with no items are absent. */
  readonly states: Partial<Record<ItemState, number>>;
}

/** Item counts per step and state (the progress lines and `status`), from the counts the journal's triggers keep. */
export function progressByStep(j: JournalDb, runId: string): StepProgress[] {
  const rows = j
    .stmt(
      `SELECT s.step_id AS stepId, c.state, c.items AS count
       FROM run_steps s JOIN run_step_states c ON c.run_id = s.run_id AND c.step_id = s.step_id
       WHERE s.run_id = ? AND c.items > 0 ORDER BY s.first_row, c.state`,
    )
    .all(runId) as { stepId: string; state: ItemState; count: number }[];
  const steps = new Map<
    string,
    { stepId: string; total: number; states: Partial<Record<ItemState, number>> }
  >();
  for (const row of rows) {
    let step = steps.get(row.stepId);
    if (!step) {
      step = { stepId: row.stepId, total: 0, states: {} };
      steps.set(row.stepId, step);
    }
    step.total += row.count;
    step.states[row.state] = row.count;
  }
  return [...steps.values()];
}

/**
 * Items of one step that succeeded with no attempt of this run (a training
 * reused from an earlier run is journalled this way). Counted only when the
 * step has succeeded items, so a run without such a step pays nothing.
 */
export function countSucceededUnattempted(j: JournalDb, runId: string, stepId: string): number {
  const row = j
    .stmt(
      `SELECT COUNT(*) AS n FROM items i
       WHERE i.run_id = @runId AND i.step_id = @stepId AND i.state = 'succeeded'
         AND NOT EXISTS (SELECT 1 FROM attempts a WHERE a.item_row = i.rowid)`,
    )
    .get({ runId, stepId }) as { n: number };
  return row.n;
}
