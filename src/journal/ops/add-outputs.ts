import { redact } from '../../shared/index.js';
import { OUTPUT_STATE } from '../records.js';
import type { JournalDb } from '../sql.js';
import { ITEM_ROW } from './columns.js';

export interface NewOutput {
  /** 1-based output number within the item. */
  readonly n: number;
  readonly generationId: string | null;
  /** Null when the service gave no URL (a copy that failed). */
  readonly url: string | null;
  readonly kind: string;
  readonly modelId: string | null;
  /**
   * Set for a copy the service failed (one of several of a multi-copy
   * create): recorded as a `failed` output with this reason, never downloaded,
   * so the manifest and the report can still list it.
   */
  readonly error?: string;
}

/** Queues an item's outputs for download; outputs already known are kept. */
export function addOutputs(
  j: JournalDb,
  runId: string,
  itemKey: string,
  outputs: readonly NewOutput[],
): void {
  const insert = j.stmt(
    `INSERT INTO outputs (item_row, n, generation_id, url, kind, model_id, state, error,
       created_at, updated_at)
     VALUES (${ITEM_ROW}, @n, @generationId, @url, @kind, @modelId, @state, @error, @now, @now)
     ON CONFLICT (item_row, n) DO NOTHING`,
  );
  const now = j.now();
  j.transaction(() => {
    for (const { error, ...output } of outputs) {
      insert.runLater({
        ...output,
        runId,
        itemKey,
        state: error === undefined ? OUTPUT_STATE.pending : OUTPUT_STATE.failed,
        // The reason can quote the service: redacted like every stored error.
        error: error === undefined ? null : redact(error),
        now,
      });
    }
  });
}
