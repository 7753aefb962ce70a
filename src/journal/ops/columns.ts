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
 * Attempts and outputs name their item by its row (`item_row`, the item's
 * `rowid`: migration 15), not by run id and key. Reads join the item back
 * (`ATTEMPTS`, `OUTPUTS`: the attempt or output `a` / `o`, its item `i`),
 * and a write names the item `@runId`, `@itemKey` by `ITEM_ROW`.
 */
export const itemRowOf = (runId: string, itemKey: string) =>
  `(SELECT rowid FROM items WHERE run_id = ${runId} AND item_key = ${itemKey})`;
export const ITEM_ROW = itemRowOf('@runId', '@itemKey');
/** `table` (attempts or outputs) as `alias`, joined to its item `i`. */
export const withItem = (table: string, alias: string) =>
  `${table} ${alias} JOIN items i ON i.rowid = ${alias}.item_row`;
export const ATTEMPTS = withItem('attempts', 'a');
export const OUTPUTS = withItem('outputs', 'o');

/** A column of the item of the row being written (RETURNING, SET), where no join can be. */
const itemOfRow = (table: string) => (column: string) =>
  `(SELECT ${column} FROM items WHERE rowid = ${table}.item_row)`;
const itemOfJoin = (column: string) => `i.${column}`;

/**
 * An attempt's `request_json` or `request_hash` stored as '' is its item's
 * (see record-attempt-intent.ts: the common case, written once, not twice);
 * the SELECT puts the item's value back, so readers never see ''.
 */
const requestOf = (a: string, item: (column: string) => string) => (column: string) =>
  `CASE WHEN ${a}.${column} = '' THEN ${item(column)} ELSE ${a}.${column} END`;

/** An `attempts` row's `column` with an elided ('') value its item's, for an UPDATE of attempts. */
export const ofItem = requestOf('attempts', itemOfRow('attempts'));

function attemptColumns(a: string, item: (column: string) => string): string {
  const request = requestOf(a, item);
  return `${item('run_id')} AS runId, ${item('item_key')} AS itemKey, ${a}.attempt_no AS attemptNo,
  ${a}.idempotency_key AS idempotencyKey, ${request('request_json')} AS request,
  ${request('request_hash')} AS requestHash, ${a}.state AS state,
  ${a}.generation_ids_json AS generationIds, ${a}.task_id AS taskId, ${a}.training_id AS trainingId,
  ${a}.influencer_id AS influencerId, ${a}.quoted_cost AS quotedCost,
  ${a}.charged_cost AS chargedCost, ${a}.refunded_credits AS refundedCredits,
  ${a}.http_status AS httpStatus, ${a}.error AS error, ${a}.created_at AS createdAt,
  ${a}.submitted_at AS submittedAt, ${a}.finished_at AS finishedAt`;
}

/** An attempt record's columns, selected FROM `ATTEMPTS`. */
export const ATTEMPT_COLUMNS = attemptColumns('a', itemOfJoin);
/** The same, RETURNING from a write of `attempts` (not an alias). */
export const ATTEMPT_COLUMNS_WRITTEN = attemptColumns('attempts', itemOfRow('attempts'));

function outputColumns(o: string, item: (column: string) => string): string {
  return `${item('run_id')} AS runId, ${item('item_key')} AS itemKey, ${o}.n AS n,
  ${o}.generation_id AS generationId, ${o}.url AS url, ${o}.kind AS kind, ${o}.model_id AS modelId,
  ${o}.file AS file, ${o}.sha256 AS sha256, ${o}.bytes AS bytes, ${o}.content_type AS contentType,
  ${o}.state AS state, ${o}.error AS error, ${o}.created_at AS createdAt, ${o}.updated_at AS updatedAt`;
}

/** An output record's columns, selected FROM `OUTPUTS`. */
export const OUTPUT_COLUMNS = outputColumns('o', itemOfJoin);
/** The same, RETURNING from a write of `outputs` (not an alias). */
export const OUTPUT_COLUMNS_WRITTEN = outputColumns('outputs', itemOfRow('outputs'));

export const ASSET_COLUMNS = `scope, sha256, mime_type AS mimeType, size, asset_url AS assetUrl,
  uploaded_at AS uploadedAt`;

export const INFLUENCER_COLUMNS = `scope, job_name AS jobName, local_id AS localId,
  config_hash AS configHash, run_id AS runId, training_id AS trainingId,
  influencer_id AS influencerId, lora_url AS loraUrl, status, idempotency_key AS idempotencyKey,
  attempt_no AS attemptNo, credits_cost AS creditsCost, refunded, error,
  created_at AS createdAt, updated_at AS updatedAt`;

export const EVENT_COLUMNS = `id, run_id AS runId, at, type, item_key AS itemKey, message,
  data_json AS data`;
