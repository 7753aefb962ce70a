import type { JournalDb } from '../sql.js';

export interface NewOutput {
  /** 1-based output number within the item. */
  readonly n: number;
  readonly generationId: string | null;
  /** Null when the service gave no URL (a safety-blocked video). */
  readonly url: string | null;
  readonly kind: string;
  readonly modelId: string | null;
}

/** Queues an item's outputs for download; outputs already known are kept. */
export function addOutputs(
  j: JournalDb,
  runId: string,
  itemKey: string,
  outputs: readonly NewOutput[],
): void {
  const insert = j.stmt(
    `INSERT INTO outputs (run_id, item_key, n, generation_id, url, kind, model_id, created_at,
       updated_at)
     VALUES (@runId, @itemKey, @n, @generationId, @url, @kind, @modelId, @now, @now)
     ON CONFLICT (run_id, item_key, n) DO NOTHING`,
  );
  const now = j.now();
  j.db.transaction(() => {
    for (const output of outputs) insert.run({ ...output, runId, itemKey, now });
  })();
}
