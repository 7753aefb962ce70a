/**
 * Where a job stands against its `budget`: the one home of "budget left".
 * `budget` caps a job over all its runs against one service (its canonical
 * base URL: every spelling of it, src/shared/service-url.ts), not one run, so every figure sums the items of every run of the job there:
 * trainings too (they are items of the `influencers` step). The reservation
 * (reserve-credits.ts) checks its cap with the same SQL fragments, so what
 * `plan`, `status`, `costs`, the report and the review page call "left" is
 * what the next reservation is measured against. Both read the per-step
 * sums (`run_steps`), a few rows per run, not every item.
 *
 * The service, not the key: a rotated API key is the same account, and the
 * service shows no account id to tell two accounts apart.
 */
import { type JournalDb, runServiceSql } from '../sql.js';
import { netCredits, tidyCredits } from './summaries.js';

export interface BudgetStanding {
  /** The cap in credits; null: the job has no budget. */
  readonly budget: number | null;
  /** reserved + charged - refunded: what counts against the budget. */
  readonly committed: number;
  /** Sum of the `creditsCost` the service charged (generations and trainings). */
  readonly charged: number;
  /** Credits the service gave back (failed generations and trainings). */
  readonly refunded: number;
  /** Credits held for creates the service has not answered yet. */
  readonly reserved: number;
  /** charged - refunded: what the job's runs really cost. */
  readonly net: number;
  /** budget - committed (may be below 0: see docs/run.md, the training estimate); null without a budget. */
  readonly remaining: number | null;
}

/** The job whose standing is asked: its name and the budget that caps it. */
export interface BudgetedJob {
  readonly name: string;
  /** The cap to measure against (the job file's, or the run's as recorded); null: none. */
  readonly budget: number | null;
}

/** Every run of the job `@jobName` against the service `@service` ('' for runs older than the field). */
export const JOB_RUNS_SQL = `SELECT run_id FROM runs
  WHERE job_name = @jobName AND ${runServiceSql('runs')} = ib_service(@service)`;

/**
 * `JOB_RUNS_SQL` for the job and service of the run `@runId`: what a
 * reservation reads inside its one statement, with nothing read before it.
 */
export const JOB_RUNS_OF_RUN_SQL = `SELECT r.run_id FROM runs r JOIN runs me ON me.run_id = @runId
  WHERE r.job_name = me.job_name AND ${runServiceSql('r')} = ${runServiceSql('me')}`;

/** What a set of items commits against a budget. */
export const COMMITTED_SQL =
  'COALESCE(SUM(reserved_credits + charged_credits - refunded_credits), 0)';

/**
 * The job's standing on `service`, in one statement, from the per-step
 * spend the journal keeps (`run_steps`, migration 11: each step's sums of
 * its items, kept to 6 places), as the reservation reads it.
 */
export function budgetStanding(
  j: JournalDb,
  job: BudgetedJob,
  service: string | null,
): BudgetStanding {
  const row = j
    .stmt(
      `SELECT COALESCE(SUM(reserved_credits), 0) AS reserved,
         COALESCE(SUM(charged_credits), 0) AS charged,
         COALESCE(SUM(refunded_credits), 0) AS refunded,
         ${COMMITTED_SQL} AS committed,
         @budget - ${COMMITTED_SQL} AS remaining
       FROM run_steps WHERE run_id IN (${JOB_RUNS_SQL})`,
    )
    .get({ jobName: job.name, service: service ?? '', budget: job.budget }) as {
    reserved: number;
    charged: number;
    refunded: number;
    committed: number;
    remaining: number | null;
  };
  return {
    budget: job.budget,
    committed: tidyCredits(row.committed),
    charged: tidyCredits(row.charged),
    refunded: tidyCredits(row.refunded),
    reserved: tidyCredits(row.reserved),
    net: tidyCredits(netCredits(row.charged, row.refunded)),
    remaining: row.remaining === null ? null : tidyCredits(row.remaining),
  };
}
