/**
 * What `report.html` shows, as one validated object: the engine builds it from
 * the journal (or from the manifest rows plus its event log) and passes it to
 * `renderReport` / `writeReport`.
 */
import { z } from 'zod';
import { ManifestRowSchema } from './manifest-row.js';

export const ReportRunSchema = z.strictObject({
  runId: z.string(),
  jobName: z.string(),
  /** ISO 8601. */
  startedAt: z.string(),
  finishedAt: z.string().optional(),
  /** Free text such as `completed`, `interrupted`, `stopped by budget`. */
  status: z.string().optional(),
  budget: z.number().nullable().optional(),
  /** The job's `tags:` (name -> text) the run was driven with. */
  tags: z.record(z.string(), z.string()).optional(),
});

export const ReportStepSchema = z.strictObject({
  id: z.string(),
  modelId: z.string(),
  /** The model's human label from `GET /models`. */
  modelLabel: z.string().optional(),
  kind: z.enum(['image', 'video']).optional(),
});

export const ReportTrainingSchema = z.strictObject({
  /** The job-local influencer id (key under `influencers:`). */
  id: z.string(),
  name: z.string(),
  status: z.string(),
  influencerId: z.string().optional(),
  creditsCost: z.number().nullable(),
  refunded: z.boolean(),
  error: z.string().optional(),
});

export const ReportEventSchema = z.strictObject({
  /** ISO 8601. */
  at: z.string(),
  message: z.string(),
  level: z.enum(['info', 'warn', 'error']).default('info'),
  step: z.string().optional(),
});

export const ReportDataSchema = z.strictObject({
  run: ReportRunSchema,
  /** Steps in job order; steps only seen in `rows` are appended after them. */
  steps: z.array(ReportStepSchema).default([]),
  /**
   * The run's spend as the journal sums it (what `status` shows). When given,
   * the report's totals are these figures, not sums of the rows.
   */
  spend: z.strictObject({ charged: z.number(), refunded: z.number(), net: z.number() }).optional(),
  /**
   * What every run of the job on this service spent together and what is left
   * of its budget (the journal's `budgetStanding`; null: no budget).
   */
  jobSpend: z
    .strictObject({
      charged: z.number(),
      refunded: z.number(),
      net: z.number(),
      remaining: z.number().nullable().optional(),
    })
    .optional(),
  /** The manifest rows: outputs (with `file`) and failures (with `error`). */
  rows: z.array(ManifestRowSchema),
  trainings: z.array(ReportTrainingSchema).default([]),
  /** The run's timeline, oldest first. */
  events: z.array(ReportEventSchema).default([]),
  /** ISO 8601 time the report was produced. @default now */
  generatedAt: z.string().optional(),
});

/** Input accepted by `renderReport` (defaults applied during validation). */
export type ReportData = z.input<typeof ReportDataSchema>;
export type ReportEvent = z.infer<typeof ReportEventSchema>;
export type ReportTraining = z.infer<typeof ReportTrainingSchema>;
