import { redactDeep } from '../../shared/index.js';
import {
  REVIEW_DECISION,
  type ReviewDecision,
  type ReviewRecord,
  reviewRecordSchema,
} from '../records.js';
import type { JournalDb } from '../sql.js';

export interface NewReview {
  readonly jobName: string;
  readonly runId: string;
  readonly itemKey: string;
  /** The output within the item; null or absent for the whole item. */
  readonly n?: number | null;
  readonly decision: ReviewDecision;
  readonly reviewer: string;
  readonly note?: string | null;
  readonly prompt?: string | null;
}

const REVIEW_COLUMNS = `id, job_name AS jobName, run_id AS runId, item_key AS itemKey, n,
  decision, reviewer, note, prompt, at`;

/** Appends one decision (committed at once: a decision survives a kill like a charge). */
export function recordReview(j: JournalDb, review: NewReview): ReviewRecord {
  const id = j
    .stmt(
      `INSERT INTO reviews (job_name, run_id, item_key, n, decision, reviewer, note, prompt, at)
       VALUES (@jobName, @runId, @itemKey, @n, @decision, @reviewer, @note, @prompt, @at)`,
    )
    .run({
      jobName: review.jobName,
      runId: review.runId,
      itemKey: review.itemKey,
      n: review.n ?? null,
      decision: review.decision,
      reviewer: review.reviewer,
      // Free text from a person (or pasted from the service): redacted like every sink.
      note: redactDeep(review.note ?? null),
      prompt: redactDeep(review.prompt ?? null),
      at: j.now(),
    }).lastInsertRowid;
  return reviewRecordSchema.parse(
    j.stmt(`SELECT ${REVIEW_COLUMNS} FROM reviews WHERE id = ?`).get(id),
  );
}

/**
 * The latest decision of each output (and each whole item) of a job, oldest
 * first: what the review page, `status`, the manifest and the next run read.
 */
export function latestReviews(j: JournalDb, jobName: string): ReviewRecord[] {
  return j
    .stmt(
      `SELECT ${REVIEW_COLUMNS} FROM reviews r
       WHERE job_name = ? AND id = (
         SELECT MAX(id) FROM reviews o
         WHERE o.job_name = r.job_name AND o.run_id = r.run_id AND o.item_key = r.item_key
           AND o.n IS r.n)
       ORDER BY id`,
    )
    .all(jobName)
    .map((row) => reviewRecordSchema.parse(row));
}

/**
 * The one rule for the review state of an output: the newer of its own
 * decision and its whole item's (`n` null); a `cleared` one means unreviewed.
 * The manifest, `status`, `export`, the review page and the next run all read
 * decisions through it.
 */
export class ReviewIndex {
  readonly #latest = new Map<string, ReviewRecord>();
  readonly #items = new Map<string, ReviewRecord[]>();

  /** `reviews`: the latest decision per output and item (`latestReviews`). */
  constructor(reviews: readonly ReviewRecord[]) {
    for (const review of reviews) {
      this.#latest.set(key(review.runId, review.itemKey, review.n), review);
      const item = key(review.runId, review.itemKey, null);
      this.#items.set(item, [...(this.#items.get(item) ?? []), review]);
    }
  }

  /** The items made by `runId` with any decision (in force or cleared): the rest are unreviewed. */
  reviewedItems(runId: string): readonly string[] {
    const keys: string[] = [];
    for (const [first] of this.#items.values())
      if (first?.runId === runId) keys.push(first.itemKey);
    return keys;
  }

  /** The decision in force for output `n` of an item made by `runId` (`n` null: the item's own). */
  of(runId: string, itemKey: string, n: number | null): DecisionInForce | undefined {
    const item = this.#latest.get(key(runId, itemKey, null));
    const own = n === null ? undefined : this.#latest.get(key(runId, itemKey, n));
    const newer = own && item ? (own.id > item.id ? own : item) : (own ?? item);
    return newer && isInForce(newer) ? newer : undefined;
  }

  /** The decisions of an item made by `runId` (its outputs' and its own). */
  ofItem(runId: string, itemKey: string): readonly ReviewRecord[] {
    return this.#items.get(key(runId, itemKey, null)) ?? [];
  }
}

/** A decision that holds: approved or rejected (a cleared one holds nothing). */
export type DecisionInForce = ReviewRecord & {
  readonly decision: Exclude<ReviewDecision, typeof REVIEW_DECISION.cleared>;
};

const isInForce = (review: ReviewRecord): review is DecisionInForce =>
  review.decision !== REVIEW_DECISION.cleared;

const key = (runId: string, itemKey: string, n: number | null) =>
  `${runId}\u0000${itemKey}\u0000${n ?? ''}`;
