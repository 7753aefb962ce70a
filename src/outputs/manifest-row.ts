/**
 * One row of `manifest.jsonl` / `manifest.csv`: one downloaded output file,
 * one copy the service failed, or one item that failed for good (then `file`
 * is absent and `error` says why). The manifest describes the whole output
 * folder: the rows of every run of the job that wrote there, each with the
 * `runId` that made it and whether it is the item's `current` output.
 *
 * Costs: `creditsCost` is the charge of the generation the row belongs to, so
 * it repeats on every output file of a multi-copy generation. Totals must count
 * each generation once (see `summarizeCosts`).
 */
import { z } from 'zod';
import { KindSchema } from '../contract/index.js';

export const MANIFEST_STATUSES = ['succeeded', 'failed', 'blocked', 'skipped'] as const;

export const ManifestRowSchema = z.strictObject({
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
  prompt: z.string().optional(),
  status: z.enum(MANIFEST_STATUSES),
  creditsCost: z.number().nullable(),
  refunded: z.boolean(),
  url: z.string().nullable(),
  /** Path relative to the output folder, POSIX separators. Absent for failures. */
  file: z.string().optional(),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  bytes: z.number().int().min(0).optional(),
  contentType: z.string().optional(),
  error: z.string().optional(),
  /** ISO 8601 time the row was recorded. */
  at: z.string().optional(),
  /**
   * True for the rows of the newest run in which the item succeeded (or, for
   * an item that never did, of the newest run that tried it); false for the
   * older, superseded rows of the same item. Absent in older manifests.
   */
  current: z.boolean().optional(),
});
export type ManifestRow = z.infer<typeof ManifestRowSchema>;

/** CSV columns, in order: fixed so spreadsheets and scripts can rely on them. */
export const MANIFEST_CSV_COLUMNS = [
  'runId',
  'step',
  'item',
  'n',
  'attempt',
  'generationId',
  'kind',
  'modelId',
  'label',
  'status',
  'creditsCost',
  'refunded',
  'file',
  'sha256',
  'bytes',
  'contentType',
  'url',
  'prompt',
  'error',
  'at',
  // New columns go at the end: scripts that read columns by position keep working.
  'current',
] as const satisfies readonly (keyof ManifestRow)[];

/**
 * Identity of a row: (run, step, item, n). The same output recorded twice
 * (e.g. after a resume) is written once; a later row with the same key but
 * other content (a failure later superseded by a success) replaces the
 * earlier one. Rows of different runs never replace each other: a
 * regenerated item keeps its older files in the manifest.
 */
export function manifestRowKey(row: Pick<ManifestRow, 'runId' | 'step' | 'item' | 'n'>): string {
  return [row.runId ?? '', row.step, row.item, row.n ?? 1].join('\u0000');
}

/**
 * Sets `current` on rows listed in run order (oldest run first): an item's
 * current run is the newest one in which it succeeded, else the newest one
 * that has a row for it.
 */
export function markCurrentRows(rows: readonly ManifestRow[]): ManifestRow[] {
  const itemOf = (row: ManifestRow) => `${row.step}\u0000${row.item}`;
  const newestSucceeded = new Map<string, string | undefined>();
  const newestAny = new Map<string, string | undefined>();
  for (const row of rows) {
    newestAny.set(itemOf(row), row.runId);
    if (row.status === 'succeeded') newestSucceeded.set(itemOf(row), row.runId);
  }
  return rows.map((row) => {
    const item = itemOf(row);
    const current = newestSucceeded.has(item) ? newestSucceeded.get(item) : newestAny.get(item);
    return { ...row, current: row.runId === current };
  });
}
