/**
 * One row of `manifest.jsonl` / `manifest.csv`: one downloaded output file, or
 * one item that failed for good (then `file` is absent and `error` says why).
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
] as const satisfies readonly (keyof ManifestRow)[];

/**
 * Identity of a row: (step, item, n). The same output recorded twice (e.g.
 * after a resume) is written once; a later row with the same key but other
 * content (a failure later superseded by a success) replaces the earlier one.
 */
export function manifestRowKey(row: Pick<ManifestRow, 'step' | 'item' | 'n'>): string {
  return [row.step, row.item, row.n ?? 1].join('\u0000');
}
