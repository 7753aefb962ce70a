/**
 * The job file format (version 1), as a strict zod schema: the single source
 * of truth for its types, its validation and the published JSON Schema
 * (`schema/job.schema.json`, `ibatch schema`). Unknown keys are errors.
 */
import { z } from 'zod';
import { LIMITS } from '../contract/index.js';
import { DEFAULT_OUTPUT_TEMPLATE } from '../outputs/index.js';
import { NOTIFY_FORMATS, notifyUrlProblem } from './notify-targets.js';
import { s3UrlProblem } from './s3-url.js';
import { isKnownEncoding } from './text-encoding.js';

/** Ids used in keys, file names and idempotency keys: keep them plain. */
export const SlugSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/, {
  message: 'must be 1-64 letters, digits, "-" or "_", starting with a letter or digit',
});

/** "30m", "90s", "2h", "1500ms". */
export const DurationSchema = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h)$/, { message: 'must be a duration such as "90s", "30m" or "2h"' });

export const MatrixValueSchema = z.union([z.string(), z.number(), z.boolean()]);
export type MatrixValue = z.infer<typeof MatrixValueSchema>;

const MatrixCombinationSchema = z.record(z.string(), MatrixValueSchema);

export const MatrixSchema = z
  .object({
    include: z
      .array(MatrixCombinationSchema)
      .optional()
      .describe(
        'Extra combinations, or extra values added to matching combinations (as in CI matrices)',
      ),
    exclude: z
      .array(MatrixCombinationSchema)
      .optional()
      .describe('Combinations to drop: every key given must match'),
  })
  .catchall(z.array(MatrixValueSchema).min(1))
  .describe('Cartesian product of the listed values; each name is a {{ template }} variable');

export const DEFAULT_FILENAME = DEFAULT_OUTPUT_TEMPLATE;

/**
 * One `pick:` entry: the source item's template values that must all match
 * (compared as text, so `5` matches a CSV's "5"), and optionally `n`, the
 * image number of that generation (the manifest's `n`, the `-2` of
 * `photos/beach-2.png`). Without `n` every image of the matching items.
 */
const PickEntrySchema = z
  .object({
    n: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.copiesMax)
      .optional()
      .describe('Image number within the source generation, 1-4 (manifest column `n`)'),
  })
  .catchall(MatrixValueSchema)
  .describe('Template values of the source item (all must match), and optionally `n`');
export type PickEntry = z.infer<typeof PickEntrySchema>;

/** `from:` with chosen images: `{ step: photos, pick: [{ scene: beach, n: 2 }] }`. */
const FromPickSchema = z
  .strictObject({
    step: SlugSchema.describe('The image step whose outputs are animated'),
    pick: z
      .array(PickEntrySchema)
      .min(1)
      .describe('Only the images matching one of these entries are animated'),
  })
  .describe('An image step and the images of it to animate');

export const StepSchema = z
  .strictObject({
    id: SlugSchema.describe('Step id: unique in the job, part of every item key'),
    model: z.string().min(1).describe('Model id from GET /models, unchanged'),
    influencer: z
      .string()
      .min(1)
      .optional()
      .describe('A job-local influencer id, or an existing influencerId (UUID) or username'),
    copies: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.copiesMax)
      .optional()
      .describe('Images per generation, 1-4 (image models only)'),
    count: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe('Independent repeats of each item'),
    matrix: MatrixSchema.optional(),
    rows: z
      .string()
      .regex(/\.(csv|tsv|txt|jsonl|ndjson|xlsx)$/i, {
        message: 'must name a .csv, .tsv, .txt, .jsonl, .ndjson or .xlsx file',
      })
      .optional()
      .describe(
        'CSV/TSV (header row), JSONL or .xlsx file: one item per row, columns are template variables',
      ),
    key: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .optional()
      .describe(
        'With `rows:`: the column(s) naming a row. A row with the same key and other values is the same item, changed',
      ),
    from: z
      .union([SlugSchema, FromPickSchema])
      .optional()
      .describe(
        'An image step: one item per image output (or per picked image), passed as generationId (image-to-video)',
      ),
    input: z
      .record(z.string(), z.unknown())
      .describe('Model input; strings may use {{ name }} templates'),
    retries: z
      .number()
      .int()
      .min(0)
      .max(10)
      .default(2)
      .describe('Retries of a generation that failed and was refunded'),
    retrySafetyBlocked: z
      .boolean()
      .default(false)
      .describe('Also retry outputs blocked by the safety filter (charged again)'),
    filename: z
      .string()
      .min(1)
      .default(DEFAULT_FILENAME)
      .describe('Output path under `output`: {step} {item} {n} {ext} and template variables'),
    timeout: DurationSchema.optional().describe(
      'Deadline for a generation to become terminal, e.g. "30m"',
    ),
    encoding: z
      .string()
      .refine(isKnownEncoding, { message: 'is not an encoding Node can read (e.g. windows-1252)' })
      .optional()
      .describe(
        'Encoding of a text rows file without a byte-order mark, e.g. windows-1252 (default UTF-8)',
      ),
    delimiter: z
      .string()
      .regex(/^(tab|[^"\r\n])$/, { message: 'must be one character (not a quote), or `tab`' })
      .optional()
      .describe('Delimiter of a .csv/.tsv/.txt rows file (default: detected from `,` `;` tab)'),
    sheet: z
      .string()
      .min(1)
      .optional()
      .describe('The sheet of an .xlsx rows file (default: the first)'),
  })
  .describe('A bulk generation step');

export const UploadSetSchema = z.strictObject({
  files: z.array(z.string().min(1)).min(1).describe('Globs relative to the job file'),
});

export const InfluencerSpecSchema = z.strictObject({
  name: z.string().min(1).max(LIMITS.trainingNameMax),
  username: z
    .string()
    .min(LIMITS.usernameMin)
    .max(LIMITS.usernameMax)
    .regex(/^[a-zA-Z0-9_]+$/, { message: 'must be letters, digits or "_"' })
    .optional(),
  style: z.enum(['realistic', 'anime']),
  gender: z.enum(['male', 'female']),
  images: z
    .union([SlugSchema, z.array(z.url()).min(1).max(LIMITS.trainingImagesMax)])
    .describe('An upload set id, or a list of 1-20 owned asset URLs'),
  consentAcknowledged: z
    .literal(true, {
      message: 'must be true: confirms you have the rights to every reference image',
    })
    .describe('Must be true'),
});

/** A receiver of the run's end: an absolute http(s) URL (src/notify). */
const NotifyUrlSchema = z
  .string()
  .superRefine((url, ctx) => {
    const problem = notifyUrlProblem(url);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .meta({ format: 'uri' });

const NotifyEntrySchema = z.union([
  NotifyUrlSchema,
  z.strictObject({
    url: NotifyUrlSchema,
    format: z
      .enum(NOTIFY_FORMATS)
      .optional()
      .describe('json: the run event; slack: a Slack message (default: slack for hooks.slack.com)'),
  }),
]);

export const NotifySchema = z
  .union([NotifyUrlSchema, z.array(NotifyEntrySchema).min(1)])
  .describe("URLs POSTed the run's end (finished or stopped), as --notify does; docs/notify.md");

/**
 * `tags:` labels a job's spend for `ibatch costs` (`--by tag:NAME`). Values
 * are text, never YAML numbers or booleans: a tag names a client or a
 * campaign on an invoice, and `1.10` or `0012` must read back as written,
 * so an unquoted number is refused with a hint to quote it.
 */
const TAG_VALUE_MAX = 100;
const TAGS_MAX = 20;
export const TagsSchema = z
  .record(
    SlugSchema.describe('Tag name (for `--by tag:NAME`)'),
    z
      .string()
      .min(1)
      .max(TAG_VALUE_MAX)
      // No control characters (a tag lands in tables, CSV and HTML), no edge spaces.
      .regex(/^[^\s\x00-\x1f\x7f](?:[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f])?$/, {
        message: 'must be text without control characters or leading/trailing spaces',
      })
      .describe('Tag value (text: quote numbers)'),
  )
  .refine((tags) => Object.keys(tags).length <= TAGS_MAX, {
    message: `must have at most ${TAGS_MAX} tags`,
  })
  .meta({
    description:
      "Labels of this job's spend, e.g. { client: acme, campaign: spring } (`ibatch costs --by tag:client`)",
    maxProperties: TAGS_MAX,
  });
const S3UrlSchema = z
  .string()
  .regex(/^s3:\/\//, { message: 'must be an s3://BUCKET/PREFIX URL' })
  .superRefine((value, ctx) => {
    const problem = value.startsWith('s3://') ? s3UrlProblem(value) : undefined;
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  })
  .describe('s3://BUCKET/PREFIX (endpoint from AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL)');

/** `deliver: s3://bucket/prefix` or `deliver: { to: s3://bucket/prefix, approved: true }`. */
const DeliverSchema = z
  .union([
    S3UrlSchema,
    z.strictObject({
      to: S3UrlSchema,
      approved: z
        .boolean()
        .default(false)
        .describe('Deliver only the outputs approved in review (`ibatch approve`)'),
    }),
  ])
  .describe('Copy the outputs and the manifest to S3-compatible storage after each run');

export const JobFileSchema = z
  .strictObject({
    version: z.literal(1, { message: 'must be 1 (the only job file version)' }),
    name: SlugSchema.describe('Job identity, part of every idempotency key'),
    budget: z
      .number()
      .min(0)
      .optional()
      .describe('Most credits the job may commit over all its runs on one service'),
    allOrNothing: z
      .boolean()
      .optional()
      .describe(
        'Start a run only when its planned total fits the budget left, --max-spend and the balance',
      ),
    trainingEstimate: z
      .number()
      .positive()
      .optional()
      .describe('Credits to assume for one training until this account has been charged for one'),
    tags: TagsSchema.optional(),
    output: z
      .string()
      .min(1)
      .optional()
      .describe('Output directory relative to the job file (default out/<name>)'),
    notify: NotifySchema.optional(),
    deliver: DeliverSchema.optional(),
    uploads: z.record(SlugSchema, UploadSetSchema).optional(),
    influencers: z.record(SlugSchema, InfluencerSpecSchema).optional(),
    generations: z.array(StepSchema).min(1),
  })
  .describe('ibatch job file, version 1');
export type JobFile = z.infer<typeof JobFileSchema>;

export const JOB_KEYS = Object.keys(JobFileSchema.shape);
export const STEP_KEYS = Object.keys(StepSchema.shape);
export const INFLUENCER_KEYS = Object.keys(InfluencerSpecSchema.shape);

/** The JSON Schema published for editors (draft-07: what yaml-language-server reads best). */
export function jobJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(JobFileSchema, { io: 'input', target: 'draft-7' });
  return {
    ...schema,
    $id: 'https://github.com/influencer-batch/ibatch/schema/job.schema.json',
    title: 'ibatch job file',
  };
}
