import type { AttemptOutcome, ItemRecord, OutputRecord } from '../records.js';
import type { JournalDb, Soon } from '../sql.js';
import { listAttemptOutcomesOfItemsSoon } from './get-attempts.js';
import { listItemsSoon } from './get-items.js';
import { listOutputsOfItemsSoon } from './outputs.js';

/** A page of a run's items with what manifest rows are made of: their outputs and attempts. */
export interface ItemPageWithRows {
  readonly items: ItemRecord[];
  /** In item then output order. */
  readonly outputs: OutputRecord[];
  /** By item, oldest first (`listAttemptOutcomesOfItems`). */
  readonly attempts: AttemptOutcome[];
}

/**
 * A run's items `pageSize` at a time in insertion order, each page with its
 * items' outputs and attempt outcomes. A page's two reads and the next
 * page's go out together as soon as the page's keys are known
 * (`Statement.allSoon`): on PostgreSQL the server makes the next page while
 * the caller uses this one, where three round trips a page, one after the
 * other, added up (docs/benchmarks.md). Read it inside one
 * `Journal.snapshot`: an `after` item deleted meanwhile would start the
 * walk again.
 */
export function* itemPagesWithRows(
  j: JournalDb,
  runId: string,
  pageSize: number,
): Generator<ItemPageWithRows> {
  let next: Soon<ItemRecord[]> | undefined = listItemsSoon(j, runId, { limit: pageSize });
  try {
    while (next !== undefined) {
      const items = next.take();
      next = undefined;
      const last = items.at(-1);
      if (last === undefined) return;
      const keys = items.map((item) => item.itemKey);
      const outputs = listOutputsOfItemsSoon(j, runId, keys);
      const attempts = listAttemptOutcomesOfItemsSoon(j, runId, keys);
      if (items.length === pageSize)
        next = listItemsSoon(j, runId, { limit: pageSize, after: last.itemKey });
      yield { items, outputs: outputs.take(), attempts: attempts.take() };
    }
  } finally {
    // Left early: the next page was asked for and is not wanted.
    next?.drop();
  }
}
