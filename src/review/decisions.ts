/**
 * Recording decisions and counting them. A decision is one append to the
 * journal's review log in its own transaction (journal.recordReview), so it
 * is safe beside a running `run` of the same job (SQLite WAL) and needs no
 * job lock: a reviewer decides while a run goes on.
 */
import { userInfo } from 'node:os';
import type { Journal, ReviewDecision, ReviewRecord } from '../journal/index.js';
import type { ManifestRow } from '../outputs/index.js';
import type { ReviewedOutput } from './outputs.js';

export interface DecisionOptions {
  /** @default the OS user */
  readonly reviewer?: string;
  readonly note?: string;
}

/** Who decides when `--reviewer` is not given: the OS user. */
export function defaultReviewer(env: NodeJS.ProcessEnv = process.env): string {
  try {
    return userInfo().username;
  } catch {
    // A uid without a passwd entry (some containers): still a decision, by someone.
    return env.USER ?? env.USERNAME ?? 'unknown';
  }
}

/** Records one decision per output, each committed at once; returns what was recorded. */
export function recordDecisions(
  journal: Pick<Journal, 'recordReview'>,
  jobName: string,
  outputs: readonly ReviewedOutput[],
  decision: ReviewDecision,
  options: DecisionOptions = {},
): ReviewRecord[] {
  const reviewer = options.reviewer ?? defaultReviewer();
  return outputs.map((output) =>
    journal.recordReview({
      jobName,
      runId: output.runId,
      itemKey: output.itemKey,
      n: output.n,
      decision,
      reviewer,
      note: options.note ?? null,
    }),
  );
}

/** Current outputs of one step per review state (what `status` shows). */
export interface ReviewCounts {
  readonly step: string;
  readonly approved: number;
  readonly rejected: number;
  readonly unreviewed: number;
}

/** Counts the current output files per step and decision, in step order of the rows. */
export function reviewCounts(rows: readonly ManifestRow[]): ReviewCounts[] {
  const counts = new Map<string, { approved: number; rejected: number; unreviewed: number }>();
  for (const row of rows) {
    if (!row.current || !row.file) continue;
    let entry = counts.get(row.step);
    if (!entry) {
      entry = { approved: 0, rejected: 0, unreviewed: 0 };
      counts.set(row.step, entry);
    }
    entry[row.review ?? 'unreviewed'] += 1;
  }
  return [...counts].map(([step, c]) => ({ step, ...c }));
}
