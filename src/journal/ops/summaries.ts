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

/** Spend of a whole run. */
export function spendSummary(j: JournalDb, runId: string): Spend {
  const row = j
    .stmt(
      `SELECT COALESCE(SUM(reserved_credits), 0) AS reserved,
         COALESCE(SUM(charged_credits), 0) AS charged,
         COALESCE(SUM(refunded_credits), 0) AS refunded
       FROM items WHERE run_id = ?`,
    )
    .get(runId) as SpendRow;
  return toSpend(row);
}

/** Spend per step, in the order steps first appear. */
export function spendByStep(j: JournalDb, runId: string): StepSpend[] {
  const rows = j
    .stmt(
      `SELECT step_id AS stepId, SUM(reserved_credits) AS reserved,
         SUM(charged_credits) AS charged, SUM(refunded_credits) AS refunded
       FROM items WHERE run_id = ? GROUP BY step_id ORDER BY MIN(rowid)`,
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

/** Item counts per step and state (the progress lines and `status`). */
export function progressByStep(j: JournalDb, runId: string): StepProgress[] {
  const rows = j
    .stmt(
      `SELECT step_id AS stepId, state, COUNT(*) AS count, MIN(rowid) AS firstRow
       FROM items WHERE run_id = ? GROUP BY step_id, state ORDER BY firstRow`,
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
