/**
 * What was spent, grouped by job, step, tag value or UTC day (`ibatch
 * costs`): one SQL aggregate over the attempts the service accepted (a 202
 * with `creditsCost`, i.e. one charge in the account's ledger). An attempt's
 * refund stays with its charge, so a day's or a `--since` window's net does
 * not move when a refund arrives later. Items' totals are sums of these same
 * attempt columns (item-money.ts), so the figures agree with
 * `status` and the budget.
 */
import { type JournalDb, runServiceSql } from '../sql.js';
import { ATTEMPTS } from './columns.js';
import { netCredits, tidyCredits as tidy } from './summaries.js';

export type CostGrouping =
  | { readonly by: 'job' | 'step' | 'day' }
  | { readonly by: 'tag'; readonly tag: string };

export interface CostQuery {
  readonly group: CostGrouping;
  /** Only this job's runs (every service); all jobs of the journal when absent. */
  readonly jobName?: string;
  /** Only charges at or after this time (ms since the epoch). */
  readonly since?: number;
}

export interface CostFigures {
  readonly charged: number;
  readonly refunded: number;
  /** charged - refunded, as everywhere in the journal. */
  readonly net: number;
  /** Generation requests charged: one per 202 that named a cost (a multi-copy create is one). */
  readonly generations: number;
  /** Trainings charged (the journal's `influencers` step). */
  readonly trainings: number;
}

export interface CostGroup extends CostFigures {
  /** The job, step id, `YYYY-MM-DD` (UTC) or tag value; null: runs without that tag. */
  readonly key: string | null;
  /** The step's job (a step id is only unique within its job); with `by: 'step'` only. */
  readonly job?: string;
}

export interface CostBreakdown {
  readonly groups: readonly CostGroup[];
  readonly total: CostFigures;
  /** Service base URLs the counted runs talked to (credits of different services are added up). */
  readonly services: readonly string[];
}

interface Row {
  key: string | null;
  job: string | null;
  charged: number;
  refunded: number;
  generations: number;
  trainings: number;
}

const KEY = {
  job: 'r.job_name',
  step: 'i.step_id',
  day: "strftime('%Y-%m-%d', a.submitted_at / 1000, 'unixepoch')",
  tag: 'json_extract(r.tags_json, @tagPath)',
} as const;

const ORDER = {
  job: 'key',
  step: 'job, MIN(i.rowid)',
  day: 'key',
  // The untagged group last on both stores (SQLite sorts NULL first,
  // PostgreSQL last); PostgreSQL takes an output name in ORDER BY only bare,
  // so the test repeats the key's expression.
  tag: `${KEY.tag} IS NULL, key`,
} as const;

// Every charged attempt in scope; `submitted_at` is when the service charged it.
const CHARGED = `FROM ${ATTEMPTS}
  JOIN runs r ON r.run_id = i.run_id
  WHERE a.submitted_at IS NOT NULL
    AND (@jobName IS NULL OR r.job_name = @jobName)
    AND a.submitted_at >= @since`;

export function costBreakdown(j: JournalDb, query: CostQuery): CostBreakdown {
  const { by } = query.group;
  const params = {
    jobName: query.jobName ?? null,
    since: query.since ?? 0,
    // Tag names are slugs (no quotes), so the quoted path is exact.
    tagPath: query.group.by === 'tag' ? `$."${query.group.tag}"` : null,
  };
  const rows = j
    .stmt(
      `SELECT ${KEY[by]} AS key, ${by === 'step' ? 'r.job_name' : 'NULL'} AS job,
         SUM(a.charged_cost) AS charged, SUM(a.refunded_credits) AS refunded,
         SUM(CASE WHEN i.kind = 'training' THEN 0 ELSE 1 END) AS generations,
         SUM(CASE WHEN i.kind = 'training' THEN 1 ELSE 0 END) AS trainings
       ${CHARGED}
       GROUP BY key, job ORDER BY ${ORDER[by]}`,
    )
    .all(params) as Row[];
  const groups = rows.map(({ key, job, ...figures }) => ({
    key,
    ...(job === null ? {} : { job }),
    ...withNet(figures),
  }));
  const services = j
    .stmt(
      `SELECT DISTINCT ${runServiceSql('r')} ${CHARGED}
       ORDER BY 1`,
    )
    .pluck()
    .all(params) as string[];
  return { groups, total: sumOf(groups), services: services.filter((s) => s !== '') };
}

function withNet(row: Omit<CostFigures, 'net'>): CostFigures {
  const charged = tidy(row.charged);
  const refunded = tidy(row.refunded);
  return { ...row, charged, refunded, net: tidy(netCredits(charged, refunded)) };
}

function sumOf(groups: readonly CostFigures[]): CostFigures {
  const add = (pick: (g: CostFigures) => number) => groups.reduce((s, g) => s + pick(g), 0);
  return withNet({
    charged: add((g) => g.charged),
    refunded: add((g) => g.refunded),
    generations: add((g) => g.generations),
    trainings: add((g) => g.trainings),
  });
}
