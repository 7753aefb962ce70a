import {
  ATTEMPT_STATE,
  type AttemptRecord,
  ITEM_STATE,
  OPEN_ATTEMPT_STATES,
  sqlStates,
} from '../records.js';
import type { JournalDb } from '../sql.js';
import { ITEM_ROW } from './columns.js';
import { attemptOf, getAttempt, RETURNING_ATTEMPT } from './get-attempts.js';
import { ITEM_MONEY } from './item-money.js';

/** What a create's 202 named on the service: generations, or one training. */
export type CreatedRemoteIds =
  | {
      /** `ids` of the 202 (the first one is polled). */
      readonly generationIds: readonly string[];
      /** The generation's task id, when the create returned one. */
      readonly taskId?: string | null;
    }
  | {
      readonly trainingId: string;
      /** The influencer the training becomes (usable once it succeeds). */
      readonly influencerId: string;
    };

export type AttemptSubmittedInput = {
  readonly runId: string;
  readonly itemKey: string;
  readonly attemptNo: number;
  /** `creditsCost` of the 202: becomes the item's charge, replacing its reservation. */
  readonly chargedCost: number;
  readonly httpStatus?: number;
} & CreatedRemoteIds;

/**
 * Records the service's acceptance (202) of an attempt in one transaction:
 * attempt -> `submitted` with its ids and charge, item -> `submitted`, the
 * reservation converted into the charge. Commit it before polling. A repeated
 * call (a replayed response) only overwrites the same facts; an attempt that
 * already finished is left as it is. Returns the attempt as stored.
 */
export function recordAttemptSubmitted(
  j: JournalDb,
  input: AttemptSubmittedInput,
): AttemptRecord | undefined {
  return j.transaction(() => {
    const now = j.now();
    const updated = j
      .stmt(
        `UPDATE attempts SET state = '${ATTEMPT_STATE.submitted}', charged_cost = @chargedCost,
             generation_ids_json = @generationIds, task_id = @taskId,
             training_id = @trainingId, influencer_id = @influencerId,
             http_status = @httpStatus, submitted_at = COALESCE(submitted_at, @now)
           WHERE item_row = ${ITEM_ROW} AND attempt_no = @attemptNo
             AND state IN (${sqlStates(OPEN_ATTEMPT_STATES)})
           ${RETURNING_ATTEMPT}`,
      )
      .get({
        runId: input.runId,
        itemKey: input.itemKey,
        attemptNo: input.attemptNo,
        chargedCost: input.chargedCost,
        ...remoteColumns(input),
        httpStatus: input.httpStatus ?? 202,
        now,
      });
    // Already finished (a replayed response): left as it is, and said as stored.
    if (updated === undefined) return getAttempt(j, input.runId, input.itemKey, input.attemptNo);
    j.stmt(
      `UPDATE items SET state = '${ITEM_STATE.submitted}', reserved_credits = 0, updated_at = @now,
           ${ITEM_MONEY}
         WHERE run_id = @runId AND item_key = @itemKey`,
    ).runLater({ now, runId: input.runId, itemKey: input.itemKey });
    return attemptOf(updated);
  });
}

function remoteColumns(ids: CreatedRemoteIds) {
  return 'trainingId' in ids
    ? {
        generationIds: '[]',
        taskId: null,
        trainingId: ids.trainingId,
        influencerId: ids.influencerId,
      }
    : {
        generationIds: JSON.stringify(ids.generationIds),
        taskId: ids.taskId ?? null,
        trainingId: null,
        influencerId: null,
      };
}
