/**
 * The journal's records and their states. Terms (run, item, attempt,
 * reservation, charge, refund, ...): docs/glossary.md.
 */
import { z } from 'zod';
import { canonicalScope, canonicalServiceUrl } from '../shared/index.js';

export const RUN_STATUS = {
  running: 'running',
  completed: 'completed',
  completedWithFailures: 'completed_with_failures',
  stoppedCredits: 'stopped_credits',
  stoppedUnreachable: 'stopped_unreachable',
  stoppedUnauthorized: 'stopped_unauthorized',
  interrupted: 'interrupted',
  /** Stopped by an error that is none of the above (a bug, a full disk); resumable. */
  stoppedError: 'stopped_error',
} as const;
export type RunStatus = (typeof RUN_STATUS)[keyof typeof RUN_STATUS];
/** Statuses after which `run` starts a new run instead of resuming. */
export const FINISHED_RUN_STATUSES: readonly RunStatus[] = [
  RUN_STATUS.completed,
  RUN_STATUS.completedWithFailures,
];

/**
 * Item states: the one list (the values are what SQLite stores). Everything
 * else names them through this object, never as bare strings.
 */
export const ITEM_STATE = {
  /** Not yet tried, or waiting for a retry. */
  pending: 'pending',
  /** An attempt intent is committed; the create request may be in flight. */
  submitting: 'submitting',
  /** The service accepted the create (202); polling until terminal. */
  submitted: 'submitted',
  succeeded: 'succeeded',
  /** Failed for good (after retries). */
  failed: 'failed',
  /** Safety-blocked by the service, not retried unless the step asks. */
  blocked: 'blocked',
  /** Not run because something it depends on failed. */
  skipped: 'skipped',
} as const;
export type ItemState = (typeof ITEM_STATE)[keyof typeof ITEM_STATE];
/** Items that failed for good: blocked and skipped count as failures. */
export const FAILED_ITEM_STATES = [
  ITEM_STATE.failed,
  ITEM_STATE.blocked,
  ITEM_STATE.skipped,
] as const satisfies readonly ItemState[];
/** Items that will not change again in this run. */
export const TERMINAL_ITEM_STATES = [
  ITEM_STATE.succeeded,
  ...FAILED_ITEM_STATES,
] as const satisfies readonly ItemState[];
export type TerminalItemState = (typeof TERMINAL_ITEM_STATES)[number];
/** Items with a create committed and not finished: sent, or maybe sent. */
export const IN_FLIGHT_ITEM_STATES = [
  ITEM_STATE.submitting,
  ITEM_STATE.submitted,
] as const satisfies readonly ItemState[];

/** True when `state` is one of `states` (which are narrower than string). */
export function isStateIn<S extends string>(states: readonly S[], state: string): state is S {
  return (states as readonly string[]).includes(state);
}

export const ATTEMPT_STATE = {
  /** Key and request committed, response not yet recorded. */
  intent: 'intent',
  submitted: 'submitted',
  succeeded: 'succeeded',
  failed: 'failed',
  blocked: 'blocked',
  /** The create was refused with a 4xx (nothing charged). */
  rejected: 'rejected',
} as const;
export type AttemptState = (typeof ATTEMPT_STATE)[keyof typeof ATTEMPT_STATE];
/** Attempts the engine must still finish after a restart. */
export const OPEN_ATTEMPT_STATES = [
  ATTEMPT_STATE.intent,
  ATTEMPT_STATE.submitted,
] as const satisfies readonly AttemptState[];
export type AttemptOutcomeState = Exclude<AttemptState, (typeof OPEN_ATTEMPT_STATES)[number]>;

/** `'a', 'b'`: a list of states for an SQL `IN (...)` (constants, never user input). */
export function sqlStates(states: readonly string[]): string {
  return states.map((s) => `'${s}'`).join(', ');
}

export const OUTPUT_STATE = {
  pending: 'pending',
  downloaded: 'downloaded',
  failed: 'failed',
} as const;
export type OutputState = (typeof OUTPUT_STATE)[keyof typeof OUTPUT_STATE];

const values = <T extends Record<string, string>>(o: T) =>
  Object.values(o) as [T[keyof T], ...T[keyof T][]];
/** A TEXT column holding JSON. */
const jsonText = z.string().transform((text): unknown => JSON.parse(text));
const ms = z.number().int();

export const runRecordSchema = z.object({
  runId: z.string(),
  jobName: z.string(),
  jobPath: z.string(),
  jobHash: z.string(),
  status: z.enum(values(RUN_STATUS)),
  budget: z.number().nullable(),
  options: jsonText,
  notBefore: ms.nullable(),
  createdAt: ms,
  updatedAt: ms,
  finishedAt: ms.nullable(),
  /** The job's `tags:` as of the run's latest start (migration 7): its spend is counted under them. */
  tags: jsonText.pipe(z.record(z.string(), z.string())),
});
export type RunRecord = z.infer<typeof runRecordSchema>;

/**
 * The service a run spent on, canonical (its options' `service`, '' for runs
 * older than the field): budget, resume and "done" are per service, as the
 * journal's SQL compares it (`runServiceSql`).
 */
export function serviceOfRun(run: Pick<RunRecord, 'options'>): string {
  const service = (run.options as { service?: unknown } | null)?.service;
  return typeof service === 'string' ? canonicalServiceUrl(service) : '';
}

/**
 * A run that records what the output folder's manifest showed made
 * (src/scheduler/adopt-manifest.ts): never a run the user started, so never
 * the run `run` resumes or follows.
 */
export function isAdoptedRun(run: Pick<RunRecord, 'options'>): boolean {
  return typeof (run.options as { adoptedFrom?: unknown } | null)?.adoptedFrom === 'string';
}

/** The service and account a run spent on (its options' `scope`: assets and trainings are reused per scope); '' when not recorded. */
export function scopeOfRun(run: Pick<RunRecord, 'options'>): string {
  const scope = (run.options as { scope?: unknown } | null)?.scope;
  return typeof scope === 'string' ? canonicalScope(scope) : '';
}

export const itemRecordSchema = z.object({
  runId: z.string(),
  itemKey: z.string(),
  stepId: z.string(),
  label: z.string(),
  modelId: z.string().nullable(),
  kind: z.string(),
  request: jsonText,
  requestHash: z.string(),
  state: z.enum(values(ITEM_STATE)),
  attemptsUsed: z.number().int(),
  expectedOutputs: z.number().int(),
  quotedCost: z.number().nullable(),
  reservedCredits: z.number(),
  chargedCredits: z.number(),
  refundedCredits: z.number(),
  error: z.string().nullable(),
  notBefore: ms.nullable(),
  sourceItemKey: z.string().nullable(),
  /** Template values in job order; null for items recorded before migration 4. */
  vars: jsonText.pipe(z.record(z.string(), z.unknown())).nullable(),
  createdAt: ms,
  updatedAt: ms,
});
export type ItemRecord = z.infer<typeof itemRecordSchema>;

export const attemptRecordSchema = z.object({
  runId: z.string(),
  itemKey: z.string(),
  attemptNo: z.number().int(),
  idempotencyKey: z.string(),
  request: jsonText,
  requestHash: z.string(),
  state: z.enum(values(ATTEMPT_STATE)),
  /** The generations a generation's 202 named (empty for a training). */
  generationIds: jsonText.pipe(z.array(z.string())),
  taskId: z.string().nullable(),
  /** The training a training's 202 named, and the influencer it becomes. */
  trainingId: z.string().nullable(),
  influencerId: z.string().nullable(),
  quotedCost: z.number().nullable(),
  chargedCost: z.number(),
  refundedCredits: z.number(),
  httpStatus: z.number().int().nullable(),
  error: z.string().nullable(),
  createdAt: ms,
  submittedAt: ms.nullable(),
  finishedAt: ms.nullable(),
});
export type AttemptRecord = z.infer<typeof attemptRecordSchema>;

/**
 * What a manifest row says of an attempt (`listAttemptOutcomesOfItemsSoon`):
 * `request` null when it is its item's.
 */
export const attemptOutcomeSchema = attemptRecordSchema
  .pick({
    itemKey: true,
    attemptNo: true,
    state: true,
    generationIds: true,
    chargedCost: true,
    refundedCredits: true,
  })
  .extend({ request: jsonText.nullable() });
export type AttemptOutcome = z.infer<typeof attemptOutcomeSchema>;

export const outputRecordSchema = z.object({
  runId: z.string(),
  itemKey: z.string(),
  n: z.number().int(),
  generationId: z.string().nullable(),
  url: z.string().nullable(),
  kind: z.string(),
  modelId: z.string().nullable(),
  file: z.string().nullable(),
  sha256: z.string().nullable(),
  bytes: z.number().int().nullable(),
  contentType: z.string().nullable(),
  state: z.enum(values(OUTPUT_STATE)),
  error: z.string().nullable(),
  createdAt: ms,
  updatedAt: ms,
});
export type OutputRecord = z.infer<typeof outputRecordSchema>;

export const assetRecordSchema = z.object({
  scope: z.string(),
  sha256: z.string(),
  mimeType: z.string(),
  size: z.number().int(),
  assetUrl: z.string(),
  uploadedAt: ms,
});
export type AssetRecord = z.infer<typeof assetRecordSchema>;

export const influencerRecordSchema = z.object({
  scope: z.string(),
  jobName: z.string(),
  localId: z.string(),
  configHash: z.string(),
  runId: z.string().nullable(),
  trainingId: z.string().nullable(),
  influencerId: z.string().nullable(),
  loraUrl: z.string().nullable(),
  status: z.string(),
  idempotencyKey: z.string().nullable(),
  attemptNo: z.number().int(),
  creditsCost: z.number().nullable(),
  refunded: z.number().transform((flag) => flag !== 0),
  error: z.string().nullable(),
  createdAt: ms,
  updatedAt: ms,
});
export type InfluencerRecord = z.infer<typeof influencerRecordSchema>;

export const eventRecordSchema = z.object({
  id: z.number().int(),
  runId: z.string(),
  at: ms,
  type: z.string(),
  itemKey: z.string().nullable(),
  message: z.string(),
  data: jsonText,
});
export type EventRecord = z.infer<typeof eventRecordSchema>;

export const REVIEW_DECISION = {
  approved: 'approved',
  rejected: 'rejected',
  /** Takes back an earlier decision: the output is unreviewed again. */
  cleared: 'cleared',
} as const;
export type ReviewDecision = (typeof REVIEW_DECISION)[keyof typeof REVIEW_DECISION];

export const reviewRecordSchema = z.object({
  id: z.number().int(),
  jobName: z.string(),
  runId: z.string(),
  itemKey: z.string(),
  /** The output within the item; null for a decision on the whole item. */
  n: z.number().int().nullable(),
  decision: z.enum(values(REVIEW_DECISION)),
  reviewer: z.string(),
  note: z.string().nullable(),
  /** A prompt edited in review, for the item's next attempt. */
  prompt: z.string().nullable(),
  at: ms,
});
export type ReviewRecord = z.infer<typeof reviewRecordSchema>;

export const DELIVERY_STATE = {
  /** Recorded before the object is sent: the store may or may not have it. */
  sending: 'sending',
  /** The store answered that it has the object with this sha256. */
  delivered: 'delivered',
} as const;
export type DeliveryState = (typeof DELIVERY_STATE)[keyof typeof DELIVERY_STATE];

export const deliveryRecordSchema = z.object({
  store: z.string(),
  bucket: z.string(),
  key: z.string(),
  sha256: z.string(),
  bytes: z.number().int(),
  state: z.enum(values(DELIVERY_STATE)),
  jobName: z.string(),
  at: ms,
});
export type DeliveryRecord = z.infer<typeof deliveryRecordSchema>;
