import { redactDeep } from '../../shared/index.js';
import { type InfluencerRecord, influencerRecordSchema } from '../records.js';
import type { JournalDb } from '../sql.js';
import { INFLUENCER_COLUMNS } from './columns.js';

export interface InfluencerLookup {
  readonly scope: string;
  readonly jobName: string;
  readonly localId: string;
  /** Hash of the training config (name, style, gender, image hashes...). */
  readonly configHash: string;
}

/**
 * The job-local influencer trained before with the same config in the same
 * scope, whatever its status; the engine reuses it when `succeeded`, resumes
 * polling when in progress, and retrains (next attempt) when failed.
 */
export function findInfluencer(j: JournalDb, key: InfluencerLookup): InfluencerRecord | undefined {
  const row = j
    .stmt(
      `SELECT ${INFLUENCER_COLUMNS} FROM influencers
       WHERE ib_scope(scope) = ib_scope(@scope) AND job_name = @jobName AND local_id = @localId
         AND config_hash = @configHash
       ORDER BY scope = @scope DESC, updated_at DESC`,
    )
    .get(key);
  return row === undefined ? undefined : influencerRecordSchema.parse(row);
}

export interface InfluencerUpdate extends InfluencerLookup {
  readonly runId?: string | null;
  readonly trainingId?: string | null;
  readonly influencerId?: string | null;
  readonly loraUrl?: string | null;
  /** `intent`, `queued`, `processing`, `succeeded`, `failed` (the service's words). */
  readonly status: string;
  readonly idempotencyKey?: string | null;
  readonly attemptNo?: number;
  readonly creditsCost?: number | null;
  readonly refunded?: boolean;
  readonly error?: string | null;
}

/**
 * Inserts or updates a training record. Fields left undefined keep their
 * stored value, so each step of the training flow records only what it learnt.
 */
export function saveInfluencer(j: JournalDb, record: InfluencerUpdate): InfluencerRecord {
  const keep = (value: unknown) => (value === undefined ? 1 : 0);
  j.stmt(
    `INSERT INTO influencers (scope, job_name, local_id, config_hash, run_id, training_id,
       influencer_id, lora_url, status, idempotency_key, attempt_no, credits_cost, refunded, error,
       created_at, updated_at)
     VALUES (@scope, @jobName, @localId, @configHash, @runId, @trainingId, @influencerId, @loraUrl,
       @status, @idempotencyKey, COALESCE(@attemptNo, 1), @creditsCost, @refunded, @error, @now, @now)
     ON CONFLICT (scope, job_name, local_id, config_hash) DO UPDATE SET
       status = excluded.status, updated_at = excluded.updated_at,
       run_id = CASE WHEN @keepRunId THEN influencers.run_id ELSE excluded.run_id END,
       training_id = CASE WHEN @keepTrainingId THEN influencers.training_id ELSE excluded.training_id END,
       influencer_id = CASE WHEN @keepInfluencerId THEN influencers.influencer_id ELSE excluded.influencer_id END,
       lora_url = CASE WHEN @keepLoraUrl THEN influencers.lora_url ELSE excluded.lora_url END,
       idempotency_key = CASE WHEN @keepKey THEN influencers.idempotency_key ELSE excluded.idempotency_key END,
       attempt_no = CASE WHEN @keepAttemptNo THEN influencers.attempt_no ELSE excluded.attempt_no END,
       credits_cost = CASE WHEN @keepCost THEN influencers.credits_cost ELSE excluded.credits_cost END,
       refunded = CASE WHEN @keepRefunded THEN influencers.refunded ELSE excluded.refunded END,
       error = CASE WHEN @keepError THEN influencers.error ELSE excluded.error END`,
  ).run({
    scope: record.scope,
    jobName: record.jobName,
    localId: record.localId,
    configHash: record.configHash,
    runId: record.runId ?? null,
    trainingId: record.trainingId ?? null,
    influencerId: record.influencerId ?? null,
    loraUrl: record.loraUrl ?? null,
    status: record.status,
    idempotencyKey: record.idempotencyKey ?? null,
    attemptNo: record.attemptNo ?? null,
    creditsCost: record.creditsCost ?? null,
    refunded: record.refunded ? 1 : 0,
    // A training's error is the service's text: redacted again, a last line of defence.
    error: redactDeep(record.error ?? null),
    now: j.now(),
    keepRunId: keep(record.runId),
    keepTrainingId: keep(record.trainingId),
    keepInfluencerId: keep(record.influencerId),
    keepLoraUrl: keep(record.loraUrl),
    keepKey: keep(record.idempotencyKey),
    keepAttemptNo: keep(record.attemptNo),
    keepCost: keep(record.creditsCost),
    keepRefunded: keep(record.refunded),
    keepError: keep(record.error),
  });
  return findInfluencer(j, record)!;
}

/** What the account was last charged for a training (the service offers no preview for trainings). */
export function lastTrainingCharge(j: JournalDb, scope: string): number | undefined {
  const cost = j
    .stmt(
      `SELECT credits_cost FROM influencers WHERE ib_scope(scope) = ib_scope(?) AND credits_cost IS NOT NULL
       ORDER BY updated_at DESC LIMIT 1`,
    )
    .pluck()
    .get(scope) as number | undefined;
  return cost ?? undefined;
}

/**
 * Every training record of a job's influencers, whatever the scope and
 * configuration: the influencers this job created (or may have created) on
 * the service, so a username they hold is not mistaken for someone else's.
 */
export function listJobInfluencers(j: JournalDb, jobName: string): InfluencerRecord[] {
  return j
    .stmt(`SELECT ${INFLUENCER_COLUMNS} FROM influencers WHERE job_name = ?`)
    .all(jobName)
    .map((row) => influencerRecordSchema.parse(row));
}
