/**
 * Recording decisions and counting them. A decision is one append to the
 * journal's review log in its own transaction (journal.recordReview), so it
 * is safe beside a running `run` of the same job (SQLite WAL) and needs no
 * job lock: a reviewer decides while a run goes on.
 */
import { userInfo } from 'node:os';
import {
  ITEM_STATE,
  type Journal,
  type ReviewDecision,
  ReviewIndex,
  type ReviewRecord,
} from '../journal/index.js';
import {
  CurrentRule,
  currentStateOf,
  type DescribedItems,
  describedOrRetiredOnDisk,
  EVERY_ITEM,
  folderRuns,
} from '../outputs/index.js';
import { newestRunOf, type ReviewedOutput } from './outputs.js';

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

/** Current outputs of one step per review state, and its files that are not current (what `status` shows). */
export interface ReviewCounts {
  readonly step: string;
  readonly approved: number;
  readonly rejected: number;
  readonly unreviewed: number;
  /** Files replaced by a newer success of their item (src/outputs/current.ts). */
  readonly superseded: number;
  /** Files of items the job file no longer describes. */
  readonly retired: number;
}

type Tally = Record<Exclude<keyof ReviewCounts, 'step'>, number>;

/** A step's counts before its files are counted: `unreviewed` of them, nothing else. */
const tally = (unreviewed = 0): Tally => ({
  approved: 0,
  rejected: 0,
  unreviewed,
  superseded: 0,
  retired: 0,
});

/**
 * `reviewCounts` of a folder holding one run of a job whose file describes
 * every item: every file is current (`CurrentRule.seesOneRun`), so only the
 * files of reviewed items are read one by one; the rest are counted in SQL.
 * `status` of a 100,000-file folder then reads a few rows, not 100,000.
 */
function countsOfOneRun(journal: Journal, runId: string, decisions: ReviewIndex): ReviewCounts[] {
  const counts = new Map<string, Tally>();
  for (const { stepId, files } of journal.countOutputFiles(runId)) counts.set(stepId, tally(files));
  const reviewed = decisions.reviewedItems(runId);
  if (reviewed.length > 0) {
    for (const file of journal.listOutputFiles(runId, reviewed)) {
      const decision = decisions.of(runId, file.itemKey, file.n)?.decision;
      const entry = counts.get(file.stepId);
      if (!decision || !entry) continue;
      entry[decision] += 1;
      entry.unreviewed -= 1;
    }
  }
  return [...counts].map(([step, c]) => ({ step, ...c }));
}

/**
 * The current output files of the job in `outputDir` per step and review
 * state, in step order (what `status` shows): the rows of `outputRows` with
 * a file and `current`, read lean: the files alone (`listOutputFiles`), not
 * every manifest row, with the same runs (`folderRuns`), the same `current`
 * rule (`CurrentRule`, with `described`: the items the job file
 * describes now) and the decision in force (`ReviewIndex`). The full rows
 * would make `status` of a large folder wait on building every row.
 */
export function reviewCounts(
  journal: Journal,
  jobName: string,
  outputDir: string,
  described?: DescribedItems,
): ReviewCounts[] {
  const runs = folderRuns(journal, newestRunOf(journal, jobName), outputDir);
  const decisions = new ReviewIndex(journal.latestReviews(jobName));
  const [only] = runs;
  if (runs.length === 1 && only && described === EVERY_ITEM)
    return countsOfOneRun(journal, only.runId, decisions);
  const files = runs.flatMap(({ runId }) =>
    journal.listOutputFiles(runId).map((file) => ({
      runId,
      step: file.stepId,
      item: file.itemKey,
      n: file.n,
      // The only rows with a file: a downloaded output's, which says succeeded.
      status: ITEM_STATE.succeeded,
    })),
  );
  const counts = new Map<string, Tally>();
  // The rule's two passes, judging each file without making a marked copy of
  // it; the rows of a folder of one run need no first pass (`seesOneRun`).
  const rule = new CurrentRule<(typeof files)[number]>(
    describedOrRetiredOnDisk(outputDir, described, jobName),
  );
  if (runs.length === 1) rule.seesOneRun();
  else for (const row of files) rule.see(row);
  for (const row of files) {
    let entry = counts.get(row.step);
    if (!entry) {
      entry = tally();
      counts.set(row.step, entry);
    }
    const state = currentStateOf(rule.judge(row));
    if (state !== 'current') entry[state] += 1;
    else entry[decisions.of(row.runId, row.item, row.n)?.decision ?? 'unreviewed'] += 1;
  }
  return [...counts].map(([step, c]) => ({ step, ...c }));
}
