import { redactDeep } from '../../shared/index.js';
import {
  type AttemptOutcomeState,
  type AttemptRecord,
  type ItemState,
  OPEN_ATTEMPT_STATES,
  sqlStates,
} from '../records.js';
import type { JournalDb } from '../sql.js';
import { addOutputs, type NewOutput } from './add-outputs.js';
import { ITEM_ROW } from './columns.js';
import { attemptOf, getAttempt, RETURNING_ATTEMPT } from './get-attempts.js';
import { ITEM_MONEY } from './item-money.js';

export interface AttemptOutcomeInput {
  readonly runId: string;
  readonly itemKey: string;
  readonly attemptNo: number;
  /** `rejected` for a create refused with a 4xx; the others after polling. */
  readonly state: AttemptOutcomeState;
  /**
   * Where the item goes next; the engine's retry policy decides (e.g. a
   * refunded failure with retries left -> `pending`, otherwise `failed`).
   */
  readonly itemState: ItemState;
  /** Whether the service refunded this attempt's charge (`refunded: true`). */
  readonly refunded?: boolean;
  /**
   * Credits refunded when only part of the charge came back (one failed copy
   * of a multi-copy create). Overrides `refunded`; capped at the charge.
   */
  readonly refundedCredits?: number;
  readonly error?: string | null;
  readonly httpStatus?: number | null;
  /** The item's outputs (on success), recorded as `pending` downloads. */
  readonly outputs?: readonly NewOutput[];
}

/**
 * Records how an attempt ended, in one transaction: attempt state, refund,
 * item state and error, the item's reservation released, its outputs queued
 * for download. Commit it before acting on the result. An attempt that already
 * finished is left unchanged (returns it as stored).
 */
export function recordAttemptOutcome(
  j: JournalDb,
  input: AttemptOutcomeInput,
): AttemptRecord | undefined {
  return j.transaction(() => {
    const now = j.now();
    // The error text can quote the service: redacted again here, a last line of defence.
    const error = redactDeep(input.error ?? null);
    const updated = j
      .stmt(
        `UPDATE attempts SET state = @state,
             refunded_credits = CASE
               WHEN @refundedCredits IS NOT NULL THEN MIN(@refundedCredits, charged_cost)
               WHEN @refunded THEN charged_cost ELSE 0 END,
             error = @error, http_status = COALESCE(@httpStatus, http_status), finished_at = @now
           WHERE item_row = ${ITEM_ROW} AND attempt_no = @attemptNo
             AND state IN (${sqlStates(OPEN_ATTEMPT_STATES)})
           ${RETURNING_ATTEMPT}`,
      )
      .get({
        runId: input.runId,
        itemKey: input.itemKey,
        attemptNo: input.attemptNo,
        state: input.state,
        refunded: input.refunded ? 1 : 0,
        refundedCredits: input.refundedCredits ?? null,
        error,
        httpStatus: input.httpStatus ?? null,
        now,
      });
    // Already finished: left unchanged, and said as stored.
    if (updated === undefined) return getAttempt(j, input.runId, input.itemKey, input.attemptNo);
    j.stmt(
      `UPDATE items SET state = @state, reserved_credits = 0, error = @error,
           updated_at = @now, ${ITEM_MONEY}
         WHERE run_id = @runId AND item_key = @itemKey`,
    ).runLater({
      runId: input.runId,
      itemKey: input.itemKey,
      state: input.itemState,
      error,
      now,
    });
    if (input.outputs?.length) addOutputs(j, input.runId, input.itemKey, input.outputs);
    return attemptOf(updated);
  });
}
