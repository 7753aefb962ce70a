import type { JournalDb } from '../sql.js';

export interface NewItem {
  readonly itemKey: string;
  readonly stepId: string;
  /** Human label for progress lines and the report (e.g. "scene=beach #2"). */
  readonly label?: string;
  readonly modelId?: string | null;
  /** `image`, `video`, `training`... */
  readonly kind: string;
  /** The request body as planned (never credentials). */
  readonly request: unknown;
  readonly requestHash: string;
  readonly expectedOutputs?: number;
  readonly quotedCost?: number | null;
  /** For `from:` chains: the item whose output this one consumes. */
  readonly sourceItemKey?: string | null;
  /** The item's template values in job order (manifest columns, report titles). */
  readonly vars?: Readonly<Record<string, unknown>> | null;
}

export interface AddItemsResult {
  /** How many items were new. */
  readonly inserted: number;
  /** Keys of items that already existed with a different request hash. */
  readonly changed: string[];
}

/** A new item's column values, as the items statements name them. */
export function itemColumns(item: NewItem) {
  return {
    itemKey: item.itemKey,
    stepId: item.stepId,
    label: item.label ?? item.itemKey,
    modelId: item.modelId ?? null,
    kind: item.kind,
    request: JSON.stringify(item.request),
    requestHash: item.requestHash,
    expectedOutputs: item.expectedOutputs ?? 1,
    quotedCost: item.quotedCost ?? null,
    sourceItemKey: item.sourceItemKey ?? null,
    vars: item.vars ? JSON.stringify(item.vars) : null,
  };
}

/**
 * Adds the expanded items of a run in one transaction. Existing items are kept
 * as they are (a resumed run re-expands its job); the ones whose request
 * changed are reported so the engine can refuse a stale resume.
 */
export function addItems(j: JournalDb, runId: string, items: readonly NewItem[]): AddItemsResult {
  const insert = j.stmt(
    `INSERT INTO items (run_id, item_key, step_id, label, model_id, kind, request_json,
       request_hash, expected_outputs, quoted_cost, source_item_key, vars_json, created_at, updated_at)
     VALUES (@runId, @itemKey, @stepId, @label, @modelId, @kind, @request, @requestHash,
       @expectedOutputs, @quotedCost, @sourceItemKey, @vars, @now, @now)
     ON CONFLICT (run_id, item_key) DO NOTHING`,
  );
  // An item recorded before migration 4 gets its values when its run resumes.
  const fillVars = j.stmt(
    `UPDATE items SET vars_json = @vars
     WHERE run_id = @runId AND item_key = @itemKey AND vars_json IS NULL AND @vars IS NOT NULL`,
  );
  const existingHash = j.stmt('SELECT request_hash FROM items WHERE run_id = ? AND item_key = ?');
  const now = j.now();
  return j.transaction(() => {
    const inserted: string[] = [];
    const changed: string[] = [];
    const insertAll = () => {
      for (const item of items) {
        const columns = itemColumns(item);
        const result = insert.run({ runId, ...columns, now });
        if (result.changes === 1) {
          inserted.push(item.itemKey);
          continue;
        }
        fillVars.run({ runId, itemKey: columns.itemKey, vars: columns.vars });
        const row = existingHash.get(runId, item.itemKey) as { request_hash: string };
        if (row.request_hash !== item.requestHash) changed.push(item.itemKey);
      }
      return inserted;
    };
    if (j.keyedItemsInBulk) j.keyedItemsInBulk(runId, insertAll);
    else insertAll();
    return { inserted: inserted.length, changed };
  });
}
