/**
 * One row of `manifest.jsonl` / `manifest.csv`: one downloaded output file,
 * one copy the service failed, or one item that failed for good (then `file`
 * is absent and `error` says why). The manifest describes the whole output
 * folder: the rows of every run of the job that wrote there, each with the
 * `runId` that made it and whether it is the item's `current` output.
 *
 * Costs: `creditsCost` is the charge of the generation the row belongs to. A
 * request for N copies makes N generations (N ids, one charge for the
 * request): each copy's row carries its own generation's share, as the
 * service reports it per id. A row without its own generation (an item failed
 * for good) carries its last attempt's charge. Rows sharing one generation id
 * repeat its charge; totals count each generation once (`summarizeCosts`).
 */
import { z } from 'zod';
import { KindSchema } from '../contract/index.js';

export const MANIFEST_STATUSES = ['succeeded', 'failed', 'blocked', 'skipped'] as const;

export const ManifestRowSchema = z.strictObject({
  /**
   * The job (its `name`) whose run made the row: several jobs may share an
   * output folder, and each reads and rewrites only its own rows. Absent in
   * older manifests.
   */
  job: z.string().optional(),
  runId: z.string().optional(),
  step: z.string().min(1),
  item: z.string().min(1),
  /** 1-based index of the output within its generation. */
  n: z.number().int().min(1).optional(),
  attempt: z.number().int().min(1).optional(),
  generationId: z.string().nullable(),
  kind: KindSchema,
  modelId: z.string(),
  label: z.string().optional(),
  /** The item's template values (matrix/row values), in job order. */
  vars: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
  prompt: z.string().optional(),
  status: z.enum(MANIFEST_STATUSES),
  creditsCost: z.number().nullable(),
  refunded: z.boolean(),
  url: z.string().nullable(),
  /** Path relative to the output folder, POSIX separators. Absent for failures. */
  file: z.string().optional(),
  /** For an output of a `from:` step: the file of the output it was made from. */
  sourceFile: z.string().optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  bytes: z.number().int().min(0).optional(),
  contentType: z.string().optional(),
  error: z.string().optional(),
  /** ISO 8601 time the row was recorded (the file downloaded, the failure known). */
  at: z.string().optional(),
  /**
   * True for the rows of the newest run in which the item succeeded (or, for
   * an item that never did, of the newest run that tried it); false for the
   * older, superseded rows of the same item, and for every row of an item the
   * job file no longer describes (the rule: src/outputs/current.ts). Absent
   * in older manifests.
   */
  current: z.boolean().optional(),
  /** Why the row is not current: `superseded by RUN` or `removed from the job`. */
  currentReason: z.string().optional(),
  /** The latest review decision of the output (or its whole item); absent when unreviewed. */
  review: z.enum(['approved', 'rejected']).optional(),
  reviewer: z.string().optional(),
  /** ISO 8601 time of that decision. */
  reviewedAt: z.string().optional(),
  /** The reviewer's note. */
  note: z.string().optional(),
  /**
   * For an output made with a job-local influencer: its id in the job file,
   * the service's influencerId it was made with, and the identity of that
   * training's configuration. What adopting a lost journal needs to reuse
   * the influencer instead of training it again (docs/outputs.md).
   */
  influencer: z.string().optional(),
  influencerId: z.string().optional(),
  influencerConfig: z.string().optional(),
});
export type ManifestRow = z.infer<typeof ManifestRowSchema>;

/**
 * The CSV's columns after `file` and the template values, in order: what a
 * person filters on first, then what scripts need.
 */
export const MANIFEST_CSV_COLUMNS = [
  'step',
  'n',
  'status',
  'creditsCost',
  'refunded',
  'at',
  'kind',
  'modelId',
  'prompt',
  'sourceFile',
  'item',
  'label',
  'job',
  'runId',
  'attempt',
  'generationId',
  'current',
  'currentReason',
  'sha256',
  'bytes',
  'contentType',
  'url',
  'error',
  'review',
  'reviewer',
  'reviewedAt',
  'note',
] as const satisfies readonly (keyof ManifestRow)[];

/** One CSV column: its header and its cell of a row. */
export interface ManifestCsvColumn {
  readonly header: string;
  readonly cell: (row: ManifestRow) => unknown;
}

/**
 * The CSV layout of `rows`: `file` first (what a person opens), then one
 * column per template variable in job order (the order the rows first name
 * them), then {@link MANIFEST_CSV_COLUMNS}. A variable named like a fixed
 * column is headed `vars.NAME`.
 */
export function manifestCsvColumns(rows: readonly ManifestRow[]): ManifestCsvColumn[] {
  const names = new Set<string>();
  for (const row of rows) addVarNames(names, row);
  return csvColumnsOf(names);
}

/** Adds the template variables `row` names to `names` (in the order rows first name them). */
export function addVarNames(names: Set<string>, row: ManifestRow): void {
  for (const name of Object.keys(row.vars ?? {})) names.add(name);
}

/** The CSV columns for these template variable names (see manifestCsvColumns). */
export function csvColumnsOf(names: Iterable<string>): ManifestCsvColumn[] {
  const fixed = new Set<string>(['file', ...MANIFEST_CSV_COLUMNS]);
  return [
    { header: 'file', cell: (row) => row.file },
    ...[...names].map((name) => ({
      header: fixed.has(name) ? `vars.${name}` : name,
      cell: (row: ManifestRow) => row.vars?.[name],
    })),
    ...MANIFEST_CSV_COLUMNS.map((column) => ({
      header: column,
      cell: (row: ManifestRow) => row[column],
    })),
  ];
}

/**
 * Identity of a row: (run, step, item, n). The same output recorded twice
 * (e.g. after a resume) is written once; a later row with the same key but
 * other content (a failure later superseded by a success) replaces the
 * earlier one. Rows of different runs never replace each other: a
 * regenerated item keeps its older files in the manifest.
 */
export function manifestRowKey(row: Pick<ManifestRow, 'runId' | 'step' | 'item' | 'n'>): string {
  return `${row.runId ?? ''}\u0000${row.step}\u0000${row.item}\u0000${row.n ?? 1}`;
}

/**
 * Whether a row on disk is job `jobName`'s, by its `job` column: jobs sharing
 * an output folder each read only their own rows. A row naming no job (an
 * older manifest, written before folders were shared) counts as the job's.
 */
export function isRowOfJob(row: Pick<ManifestRow, 'job'>, jobName: string): boolean {
  return row.job === undefined || row.job === jobName;
}
