/**
 * `ibatch costs` output: the `--json` document, `--csv` for spreadsheets and
 * the table for a person, all from one `CostBreakdown` (the journal's sums).
 * A run without the grouped tag is the "(none)" group (`key: null` in JSON);
 * the total is the last row of the table and the CSV, `total` in JSON.
 */
import { SlugSchema } from '../job/index.js';
import type { BudgetStanding, CostBreakdown, CostFigures, CostGrouping } from '../journal/index.js';
import { csvLine } from '../outputs/index.js';
import { printable, UsageError } from '../shared/index.js';
import { renderTable } from './table.js';

const NO_TAG = '(none)';
const TOTAL = '(total)';
const FIGURES = ['charged', 'refunded', 'net', 'generations', 'trainings'] as const;

/** `job`, `step`, `day` or `tag:NAME` (the value of `--by`). */
export function parseGrouping(value: string): CostGrouping {
  if (value === 'job' || value === 'step' || value === 'day') return { by: value };
  const tag = /^tag:(.*)$/.exec(value)?.[1];
  if (tag !== undefined && SlugSchema.safeParse(tag).success) return { by: 'tag', tag };
  throw new UsageError(
    `Expected \`--by\` to be job, step, day or tag:NAME (NAME a tag name such as client), got \`${value}\``,
  );
}

/**
 * `--since`: a UTC date (`2026-03-01`, from its midnight) or an ISO
 * timestamp; one without an offset is read as UTC, like `--by day`.
 */
export function parseSince(value: string): number {
  const text = /^\d{4}-\d{2}-\d{2}$/.test(value)
    ? `${value}T00:00:00Z`
    : /^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(value)
      ? `${value}Z`
      : value;
  const ms = /^\d{4}-\d{2}-\d{2}T/.test(text) ? Date.parse(text) : Number.NaN;
  if (!Number.isFinite(ms)) {
    throw new UsageError(
      `Expected \`--since\` to be a date (2026-03-01) or an ISO timestamp (2026-03-01T09:00:00Z), got \`${value}\``,
    );
  }
  return ms;
}

export function groupingLabel(group: CostGrouping): string {
  return group.by === 'tag' ? `tag:${group.tag}` : group.by;
}

export interface CostsDocument extends CostBreakdown {
  readonly journal: string;
  /** The job asked for; null for every job of the journal. */
  readonly job: string | null;
  readonly by: string;
  /** ISO time of `--since`; null without it. */
  readonly since: string | null;
  /** With a job: its standing against its budget on each service (all time). */
  readonly standings?: readonly ServiceStanding[];
}

/** A job's budget standing on one service base URL. */
export interface ServiceStanding extends BudgetStanding {
  readonly service: string;
}

/** Header and rows (total last) shared by the table and the CSV. */
function grid(doc: CostsDocument, group: CostGrouping) {
  const first = group.by === 'tag' ? group.tag : group.by;
  const withJob = group.by === 'step';
  const header = [...(withJob ? ['job'] : []), first, ...FIGURES];
  const figures = (f: CostFigures) => FIGURES.map((name) => f[name]);
  const rows: (string | number)[][] = doc.groups.map((g) => [
    ...(withJob ? [g.job ?? ''] : []),
    g.key ?? NO_TAG,
    ...figures(g),
  ]);
  rows.push([...(withJob ? [''] : []), TOTAL, ...figures(doc.total)]);
  return { header, rows };
}

export function renderCostsCsv(doc: CostsDocument, group: CostGrouping): string {
  const { header, rows } = grid(doc, group);
  return [header, ...rows].map(csvLine).join('');
}

export function renderCostsTable(
  doc: CostsDocument,
  group: CostGrouping,
  options: { color: boolean },
): string {
  const { header, rows } = grid(doc, group);
  const text = rows.map((row) =>
    row.map((value) => (typeof value === 'number' ? String(Math.round(value * 100) / 100) : value)),
  );
  const scope = doc.job ? `job ${doc.job}` : 'every job';
  const since = doc.since ? ` since ${doc.since}` : '';
  const lines = [`credits spent by ${doc.by}, ${scope}${since} (journal ${doc.journal})`];
  if (doc.services.length > 1) {
    lines.push(
      `note: runs on ${doc.services.length} services are added up: ${doc.services.join(', ')}`,
    );
  }
  const budgets = (doc.standings ?? [])
    .filter((s) => s.budget !== null)
    .map((s) => `budget ${s.budget}: ${s.committed} committed, ${s.remaining} left (${s.service})`);
  // The lines around the table quote the journal path and service URLs: escaped like its cells.
  const above = lines.map(printable).join('\n');
  const below = budgets.map((b) => `${printable(b)}\n`).join('');
  return `${above}\n${renderTable(header, text, options)}${below}`;
}
