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
  /** By item, oldest first (`listAttemptOutcomesOfItemsSoon`). */
  readonly attempts: AttemptOutcome[];
}

/** The reads of one page sent soon: its outputs and attempts, and the page after it. */
interface PageReads {
  readonly outputs: Soon<OutputRecord[]>;
  readonly attempts: Soon<AttemptOutcome[]>;
  readonly next: Soon<ItemRecord[]> | undefined;
}

/**
 * A run's items `pageSize` at a time in insertion order, each page with its
 * items' outputs and attempt outcomes. A page is handed over once the reads
 * of the page after it have gone out: its outputs and attempts (by its keys,
 * which PostgreSQL's planner looks up by index) and the page after that
 * (`Statement.allSoon`), so on PostgreSQL the server and the worker make
 * them while the caller uses this page, where three round trips a page, one
 * after the other, added up (docs/benchmarks.md). Read it inside one
 * `Journal.snapshot`: the reads of a page must see one journal.
 */
export function* itemPagesWithRows(
  j: JournalDb,
  runId: string,
  pageSize: number,
): Generator<ItemPageWithRows> {
  const readsOf = (items: readonly ItemRecord[]): PageReads => {
    const keys = items.map((item) => item.itemKey);
    const last = keys.at(-1);
    return {
      outputs: listOutputsOfItemsSoon(j, runId, keys),
      attempts: listAttemptOutcomesOfItemsSoon(j, runId, keys),
      next:
        items.length === pageSize && last !== undefined
          ? listItemsSoon(j, runId, { limit: pageSize, after: last })
          : undefined,
    };
  };
  let items = listItemsSoon(j, runId, { limit: pageSize }).take();
  let reads: PageReads | undefined = items.length > 0 ? readsOf(items) : undefined;
  try {
    while (reads !== undefined) {
      const outputs = reads.outputs.take();
      const attempts = reads.attempts.take();
      const next = reads.next?.take() ?? [];
      reads = next.length > 0 ? readsOf(next) : undefined;
      yield { items, outputs, attempts };
      items = next;
    }
  } finally {
    // Left early, or a read failed: what was asked for and not taken is not wanted.
    if (reads !== undefined)
      for (const read of [reads.outputs, reads.attempts, reads.next]) read?.drop();
  }
}
