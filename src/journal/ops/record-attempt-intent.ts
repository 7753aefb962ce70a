import { ATTEMPT_STATE, type AttemptRecord, ITEM_STATE } from '../records.js';
import type { JournalDb } from '../sql.js';
import { attemptOf, getAttempt, RETURNING_ATTEMPT } from './get-attempts.js';
import { type InfluencerLookup, saveInfluencer } from './influencers.js';
import { type ReserveResult, type RunSpendCap, reserveCredits } from './reserve-credits.js';

export interface AttemptIntentInput {
  readonly runId: string;
  readonly itemKey: string;
  /** 1-based; the item's next attempt number. */
  readonly attemptNo: number;
  /** From `idempotencyKey(...)`. */
  readonly idempotencyKey: string;
  /** The exact body that will be sent. */
  readonly request: unknown;
  readonly requestHash: string;
  /** Credits to hold against the budget until the 202 says the real charge. */
  readonly quotedCost: number | null;
  /** This invocation's `--max-spend`, as a ceiling on the run's committed credits. */
  readonly spendCap?: RunSpendCap;
  /**
   * A training's record, marked `intent` with this attempt's key in the same
   * transaction: from the moment the create may be sent, the journal says the
   * job may hold the influencer's username, whatever instant a kill comes at.
   */
  readonly training?: InfluencerLookup;
}

export type AttemptIntentResult =
  /** Committed: the request may be sent now. */
  | { readonly kind: 'recorded'; readonly attempt: AttemptRecord }
  /** This attempt was recorded before (a resume): re-send it with the same key. */
  | { readonly kind: 'existing'; readonly attempt: AttemptRecord }
  /** Nothing was recorded: the reservation would pass the run's budget. */
  | { readonly kind: 'over-budget'; readonly reserve: Extract<ReserveResult, { ok: false }> };

/**
 * Write-ahead intent: in ONE transaction, reserves the item's quoted cost
 * against the budget, records the attempt (key + request), marks the item
 * `submitting` and a training's record `intent`. Commit this BEFORE sending
 * the create, so a crash at any later instant leaves the key in the journal
 * and the next run re-sends it (the service replays instead of charging
 * twice).
 */
export function recordAttemptIntent(j: JournalDb, input: AttemptIntentInput): AttemptIntentResult {
  return j.transaction((): AttemptIntentResult => {
    const previous = getAttempt(j, input.runId, input.itemKey, input.attemptNo);
    if (previous) {
      if (previous.idempotencyKey !== input.idempotencyKey) {
        throw new Error(
          `Attempt ${input.attemptNo} of ${input.itemKey} is already recorded with another key`,
        );
      }
      return { kind: 'existing', attempt: previous };
    }
    const item = j
      .stmt(
        `SELECT rowid AS itemRow, reserved_credits AS held, request_json AS request,
           request_hash AS hash
           FROM items WHERE run_id = ? AND item_key = ?`,
      )
      .get(input.runId, input.itemKey) as
      | { itemRow: number; held: number; request: string; hash: string }
      | undefined;
    if (item === undefined) throw new Error(`No item ${input.itemKey} in run ${input.runId}`);
    const missing = Math.max(0, (input.quotedCost ?? 0) - item.held);
    const reserve = reserveCredits(j, input.runId, input.itemKey, missing, input.spendCap);
    if (!reserve.ok) return { kind: 'over-budget', reserve };
    const now = j.now();
    const inserted = j
      .stmt(
        `INSERT INTO attempts (item_row, attempt_no, idempotency_key, request_json,
           request_hash, state, quoted_cost, created_at)
         VALUES (@itemRow, @attemptNo, @idempotencyKey, @request, @requestHash, '${ATTEMPT_STATE.intent}',
           @quotedCost, @now)
         ${RETURNING_ATTEMPT}`,
      )
      .get({
        itemRow: item.itemRow,
        attemptNo: input.attemptNo,
        idempotencyKey: input.idempotencyKey,
        // The same as the item's (nearly always): '' says so, and the reads
        // put the item's back (columns.ts). A request is most of an
        // attempt's bytes; a 100,000-item journal need not hold each twice.
        request: sameAsItem(JSON.stringify(input.request), item.request),
        requestHash: sameAsItem(input.requestHash, item.hash),
        quotedCost: input.quotedCost,
        now,
      });
    const attempt = attemptOf(inserted);
    if (attempt === undefined)
      throw new Error(`Attempt ${input.attemptNo} of ${input.itemKey} was not recorded`);
    j.stmt(
      `UPDATE items SET state = '${ITEM_STATE.submitting}', attempts_used = MAX(attempts_used, @attemptNo),
           error = NULL, not_before = NULL, updated_at = @now
         WHERE run_id = @runId AND item_key = @itemKey`,
    ).runLater({ runId: input.runId, itemKey: input.itemKey, attemptNo: input.attemptNo, now });
    if (input.training) {
      // An earlier attempt's ids stay until this one's answer: the influencer
      // it made is still the job's, and may still hold the username.
      saveInfluencer(j, {
        ...input.training,
        runId: input.runId,
        status: ATTEMPT_STATE.intent,
        idempotencyKey: input.idempotencyKey,
        attemptNo: input.attemptNo,
      });
    }
    return { kind: 'recorded', attempt };
  });
}

/** '' (the item's value, see columns.ts) when `value` is the item's, else `value`. */
function sameAsItem(value: string, items: string): string {
  return value === items ? '' : value;
}
