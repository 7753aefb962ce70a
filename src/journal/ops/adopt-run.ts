/**
 * Records items made before the journal was lost (found in the output
 * folder's manifest, files checked) as one finished run, so the desired-state
 * comparison sees them done and no run pays for them again.
 */
import { ATTEMPT_STATE, ITEM_STATE, RUN_STATUS, type RunRecord } from '../records.js';
import type { JournalDb } from '../sql.js';
import { addItems, type NewItem } from './add-items.js';
import { addOutputs, type NewOutput } from './add-outputs.js';
import { ITEM_ROW } from './columns.js';
import { type CreateRunInput, createRun } from './create-run.js';
import { appendEvent, type NewEvent } from './events.js';
import { getRun } from './get-run.js';
import { type DownloadedOutput, markOutputDownloaded } from './outputs.js';
import { setItemState } from './update-item.js';
import { setRunStatus } from './update-run.js';

export interface AdoptedItem {
  readonly item: NewItem;
  /** The synthetic succeeded attempt: its key, and the request it stands for. */
  readonly attempt: { readonly idempotencyKey: string; readonly request: unknown };
  readonly outputs: ReadonlyArray<{ readonly output: NewOutput; readonly file: DownloadedOutput }>;
}

export interface AdoptRunInput {
  readonly run: CreateRunInput;
  readonly items: readonly AdoptedItem[];
  /** The run's one timeline entry (`run.adopted`). */
  readonly event: NewEvent;
}

/**
 * In one transaction: a `completed` run whose items succeeded with one
 * synthetic attempt each (never sent: no `submitted_at`, so the rate gate does
 * not count it) and their outputs downloaded. Nothing is charged: what the
 * items cost was recorded by the journal that was lost, not here.
 */
export function adoptRun(j: JournalDb, input: AdoptRunInput): RunRecord {
  return j.transaction(() => {
    const { runId } = createRun(j, input.run);
    addItems(
      j,
      runId,
      input.items.map((a) => a.item),
    );
    const now = j.now();
    const attempt = j.stmt(
      `INSERT INTO attempts (item_row, attempt_no, idempotency_key, request_json,
           request_hash, state, generation_ids_json, charged_cost, created_at, finished_at)
         VALUES (${ITEM_ROW}, 1, @idempotencyKey, @request, @requestHash,
           '${ATTEMPT_STATE.succeeded}', @generationIds, 0, @now, @now)`,
    );
    const attemptsUsed = j.stmt(
      'UPDATE items SET attempts_used = 1 WHERE run_id = ? AND item_key = ?',
    );
    for (const { item, attempt: a, outputs } of input.items) {
      attempt.run({
        runId,
        itemKey: item.itemKey,
        idempotencyKey: a.idempotencyKey,
        request: JSON.stringify(a.request),
        requestHash: item.requestHash,
        generationIds: JSON.stringify([
          ...new Set(
            outputs.flatMap((o) => (o.output.generationId ? [o.output.generationId] : [])),
          ),
        ]),
        now,
      });
      attemptsUsed.run(runId, item.itemKey);
      setItemState(j, runId, item.itemKey, { state: ITEM_STATE.succeeded, error: null });
      addOutputs(
        j,
        runId,
        item.itemKey,
        outputs.map((o) => o.output),
      );
      for (const o of outputs) markOutputDownloaded(j, runId, item.itemKey, o.output.n, o.file);
    }
    appendEvent(j, runId, input.event);
    setRunStatus(j, runId, RUN_STATUS.completed);
    return getRun(j, runId)!;
  });
}
