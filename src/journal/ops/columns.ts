/**
 * SELECT lists that alias snake_case columns to the camelCase record fields,
 * so a row parses straight into its zod record schema (records.ts).
 */
export const RUN_COLUMNS = `run_id AS runId, job_name AS jobName, job_path AS jobPath,
  job_hash AS jobHash, status, budget, options_json AS options, not_before AS notBefore,
  created_at AS createdAt, updated_at AS updatedAt, finished_at AS finishedAt,
  tags_json AS tags`;

export const ITEM_COLUMNS = `run_id AS runId, item_key AS itemKey, step_id AS stepId, label,
  model_id AS modelId, kind, request_json AS request, request_hash AS requestHash, state,
  attempts_used AS attemptsUsed, expected_outputs AS expectedOutputs, quoted_cost AS quotedCost,
  reserved_credits AS reservedCredits, charged_credits AS chargedCredits,
  refunded_credits AS refundedCredits, error, not_before AS notBefore,
  source_item_key AS sourceItemKey, vars_json AS vars, created_at AS createdAt,
  updated_at AS updatedAt`;

/**
 * An attempt's `request_json` or `request_hash` stored as '' is its item's
 * (see record-attempt-intent.ts: the common case, written once, not twice);
 * the SELECT puts the item's value back, so readers never see ''.
 */
export const ofItem = (column: string) =>
  `CASE WHEN attempts.${column} = '' THEN (SELECT i.${column} FROM items i
     WHERE i.run_id = attempts.run_id AND i.item_key = attempts.item_key)
   ELSE attempts.${column} END`;

/** Select FROM attempts (not an alias): the item's request fills an elided one. */
export const ATTEMPT_COLUMNS = `run_id AS runId, item_key AS itemKey, attempt_no AS attemptNo,
  idempotency_key AS idempotencyKey, ${ofItem('request_json')} AS request,
  ${ofItem('request_hash')} AS requestHash, state,
  generation_ids_json AS generationIds, task_id AS taskId, training_id AS trainingId,
  influencer_id AS influencerId, quoted_cost AS quotedCost,
  charged_cost AS chargedCost, refunded_credits AS refundedCredits, http_status AS httpStatus,
  error, created_at AS createdAt, submitted_at AS submittedAt, finished_at AS finishedAt`;

export const OUTPUT_COLUMNS = `run_id AS runId, item_key AS itemKey, n, generation_id AS generationId,
  url, kind, model_id AS modelId, file, sha256, bytes, content_type AS contentType, state, error,
  created_at AS createdAt, updated_at AS updatedAt`;

export const ASSET_COLUMNS = `scope, sha256, mime_type AS mimeType, size, asset_url AS assetUrl,
  uploaded_at AS uploadedAt`;

export const INFLUENCER_COLUMNS = `scope, job_name AS jobName, local_id AS localId,
  config_hash AS configHash, run_id AS runId, training_id AS trainingId,
  influencer_id AS influencerId, lora_url AS loraUrl, status, idempotency_key AS idempotencyKey,
  attempt_no AS attemptNo, credits_cost AS creditsCost, refunded, error,
  created_at AS createdAt, updated_at AS updatedAt`;

export const EVENT_COLUMNS = `id, run_id AS runId, at, type, item_key AS itemKey, message,
  data_json AS data`;
