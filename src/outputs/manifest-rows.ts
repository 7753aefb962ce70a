/**
 * Manifest rows rebuilt from the journal (the source of truth). One run's
 * rows: one per downloaded output, one per copy the service failed, one per
 * item that failed for good. The folder's rows: those of every run of the job
 * that wrote into the folder, oldest run first, each marked `current` or not,
 * so a re-run that regenerates an item keeps the earlier files listed.
 */
import path from 'node:path';
import {
  type AttemptOutcome,
  FAILED_ITEM_STATES,
  ITEM_STATE,
  type ItemRecord,
  isStateIn,
  type Journal,
  OUTPUT_STATE,
  type OutputRecord,
  ReviewIndex,
  type RunRecord,
} from '../journal/index.js';
import { thisMachine } from '../shared/index.js';
import { type DescribedItems, markCurrentRows } from './current.js';
import { type RawRowOwner, retiredItemsOnDisk } from './manifest-read.js';
import type { ManifestRow } from './manifest-row.js';
import {
  failedOutputRow,
  fileRow,
  generationCharge,
  isoOf,
  itemColumns,
  jobInfluencers,
  type RowAttempt,
  type RowSource,
  succeededAttempt,
} from './manifest-row-of-item.js';

/** More runs than any journal holds: `listRuns` then returns all of them. */
const EVERY_RUN = 1_000_000;

/** The output folder a run recorded when it started, if any. */
export function recordedOutputDir(run: RunRecord): string | undefined {
  const dir = (run.options as { outputDir?: unknown } | null)?.outputDir;
  return typeof dir === 'string' ? path.resolve(dir) : undefined;
}

/**
 * The machine a run recorded it started on, when it is another than this
 * one (a shared PostgreSQL journal): its recorded output folder is a path on
 * that machine, which means nothing here. Runs that recorded no host (older
 * journals, a journal file) are this machine's.
 */
export function recordedElsewhere(run: RunRecord): string | undefined {
  const host = (run.options as { host?: unknown } | null)?.host;
  return typeof host === 'string' && host !== thisMachine() ? host : undefined;
}

/**
 * The output folder a reader (`review`, `approve`, `reject`, `export`,
 * `deliver`) uses for `run`: the one it recorded, else `here` (the job's
 * `output:` or `--out`); for a run recorded on another machine, always
 * `here`, where the reader fetches the files it lacks (fetchOutputsHere).
 */
export function readerOutputDir(run: RunRecord, here: string): string {
  if (recordedElsewhere(run) !== undefined) return path.resolve(here);
  return recordedOutputDir(run) ?? here;
}

/**
 * Runs whose recorded output folder is `outputDir`, oldest first. With
 * `jobName`: only that job's runs, and also those that recorded no folder
 * (older journals), since they wrote where the job said.
 */
export function runsInFolder(journal: Journal, outputDir: string, jobName?: string): RunRecord[] {
  const folder = path.resolve(outputDir);
  return journal
    .listRuns(jobName, EVERY_RUN)
    .reverse()
    .filter((run) => {
      const dir = recordedOutputDir(run);
      return dir === folder || (jobName !== undefined && dir === undefined);
    });
}

/** The runs whose rows the manifest of `outputDir` lists as `run` leaves it, in run order. */
export function folderRuns(journal: Journal, run: RunRecord, outputDir: string): RunRecord[] {
  // A run of another machine read here: its rows are those of the folder it
  // wrote on its machine (readerOutputDir), whatever this machine's path is.
  const folder = recordedElsewhere(run) ? (recordedOutputDir(run) ?? outputDir) : outputDir;
  const runs = runsInFolder(journal, folder, run.jobName);
  if (!runs.some((r) => r.runId === run.runId)) runs.push(run);
  return runs;
}

/**
 * The manifest of `outputDir` as `run` leaves it, in memory (the review
 * page's listing): every run of its job there, in run order, marked
 * `current` (src/outputs/current.ts; `described`: the items the job file
 * describes now). Other jobs' rows in a shared folder are not listed.
 */
export function folderManifestRows(
  journal: Journal,
  run: RunRecord,
  outputDir: string,
  described: DescribedItems | undefined,
): ManifestRow[] {
  // One read: its pages see one state of the journal (see Journal.snapshot).
  const judged = describedOrRetiredOnDisk(outputDir, described, run.jobName);
  return journal.snapshot(() =>
    markCurrentRows([...folderRowSource(journal, run, outputDir)()], judged),
  );
}

/**
 * `described` (the items the job file describes now) when known; else, so
 * that a reader without the job file agrees with the last rewrite that had
 * it, every item but those the manifest on disk says were removed from the
 * job `jobName`.
 */
export function describedOrRetiredOnDisk(
  outputDir: string,
  described: DescribedItems | undefined,
  jobName: string,
): DescribedItems {
  if (described) return described;
  const retired = retiredItemsOnDisk(outputDir, jobName);
  return { has: (item) => !retired.has(item) };
}

/**
 * The rows on disk a rewrite of job `jobName`'s rows keeps as they are, in
 * file order: the rows of other jobs sharing the folder, before and after
 * this job's block (which stays where its first row was, so a folder's order
 * is stable whichever job rewrites it), and `ownUnknown`, this job's rows of
 * runs the journal does not know (a lost or another journal's: their files
 * are still in the folder). This job's rows of runs the journal knows are
 * left out: the rewrite rebuilds them.
 */
export interface KeptRows {
  readonly before: ManifestRow[];
  readonly ownUnknown: ManifestRow[];
  readonly after: ManifestRow[];
}

export function keptRows(
  journal: Journal,
  jobName: string,
  onDisk: (rebuilt: (row: RawRowOwner) => boolean) => Iterable<ManifestRow | undefined>,
): KeptRows {
  const jobOf = runJobs(journal);
  const kept: KeptRows = { before: [], ownUnknown: [], after: [] };
  let ownSeen = false;
  // This job's rows of runs the journal knows are only read for their place.
  const rebuilt = (row: RawRowOwner) =>
    typeof row.runId === 'string' && jobOf(row.runId) === jobName;
  for (const row of onDisk(rebuilt)) {
    if (row === undefined) {
      ownSeen = true;
      continue;
    }
    const known = row.runId === undefined ? undefined : jobOf(row.runId);
    // A run the journal knows says whose it is; else the row's own column
    // (absent in older manifests: then it is taken as this job's, as before).
    const job = known ?? row.job ?? jobName;
    if (job !== jobName) {
      (ownSeen ? kept.after : kept.before).push(row);
      continue;
    }
    ownSeen = true;
    if (known === undefined) kept.ownUnknown.push(row);
  }
  return kept;
}

/**
 * The job of a run by its id (undefined when the journal does not know it).
 * One lookup per run, not per row (a folder holds 100,000 rows of a few runs).
 */
function runJobs(journal: Journal): (runId: string) => string | undefined {
  const known = new Map<string, string | undefined>();
  return (runId) => {
    if (!known.has(runId)) known.set(runId, journal.getRun(runId)?.jobName);
    return known.get(runId);
  };
}

/**
 * The rows of `run`'s job in `outputDir`'s manifest as `run` leaves it, not
 * yet marked `current`, as a source that reads them again from the journal
 * page by page each time it is iterated (never all held: the manifest
 * writer spools them once to disk): `ownUnknown` (this job's rows on disk
 * of runs this journal does not know: the manifest describes the folder,
 * and those files are still in it) first, then every run of the job in the
 * folder, oldest first.
 */
export function folderRowSource(
  journal: Journal,
  run: RunRecord,
  outputDir: string,
  ownUnknown: readonly ManifestRow[] = [],
): () => Iterable<ManifestRow> {
  const runs = folderRuns(journal, run, outputDir);
  // Every run here is the job's: its decisions are read once for all of them.
  const reviews = new ReviewIndex(journal.latestReviews(run.jobName));
  const source: RowSource = {
    journal,
    influencers: jobInfluencers(journal, run.jobName),
    job: run.jobName,
  };
  return function* rows() {
    yield* ownUnknown;
    for (const r of runs)
      for (const page of runManifestRowPages(source, r.runId, reviews)) yield* page;
  };
}

/** Items read at once when rows are rebuilt: bounded memory at 100,000 items. */
const ITEMS_PER_PAGE = 1000;

/**
 * The rows of one run, a page of items at a time (each page's attempts and
 * outputs read in one query each: a query per item is slow on a large run,
 * and the whole run at once would hold all of it in memory; the next page
 * read while this one is made, `Journal.itemPagesWithRows`).
 */
function* runManifestRowPages(
  source: RowSource,
  runId: string,
  reviews: ReviewIndex,
): Generator<ManifestRow[]> {
  for (const page of source.journal.itemPagesWithRows(runId, ITEMS_PER_PAGE)) {
    const outputs = groupByItem(page.outputs);
    const attempts = groupByItem(page.attempts);
    const rows: ManifestRow[] = [];
    for (const item of page.items) {
      if (item.kind === 'training') continue;
      itemRows(
        source,
        item,
        withRequests(attempts.get(item.itemKey), item),
        outputs.get(item.itemKey) ?? [],
        rows,
      );
    }
    yield withReviews(rows, reviews);
  }
}

/** An item's attempts as rows read them: an attempt sent as its item was has its item's request. */
function withRequests(
  attempts: readonly AttemptOutcome[] | undefined,
  item: ItemRecord,
): readonly RowAttempt[] {
  if (!attempts) return [];
  for (const attempt of attempts) attempt.request ??= item.request;
  return attempts;
}

/**
 * Appends the rows of one item to `rows`. Which rows get a file is said once
 * more in SQL by the journal's `listOutputFiles` (the lean read `status`
 * counts reviews with): test/review/review-counts.test.ts holds them equal.
 */
function itemRows(
  source: RowSource,
  item: ItemRecord,
  attempts: readonly RowAttempt[],
  own: readonly OutputRecord[],
  rows: ManifestRow[],
): void {
  const last = attempts.at(-1);
  const failed = isStateIn(FAILED_ITEM_STATES, item.state);
  // An item that failed for good after its generation succeeded (a download
  // that can never succeed, a protected name) was charged: its outputs are
  // listed like a succeeded item's, each with why it has no file.
  const paidFor = failed && own.some((o) => o.url !== null);
  if (item.state === ITEM_STATE.succeeded || paidFor) {
    const winning = succeededAttempt(attempts) ?? last;
    const common = { ...itemColumns(source, item, winning), attempt: winning?.attemptNo };
    const creditsCost = generationCharge(winning);
    for (const output of own) {
      if (output.url !== null && output.state !== OUTPUT_STATE.downloaded) {
        // A download that failed: for good (the item failed), or so far (a
        // stopped run whose resume fetches it again). Not downloaded yet in
        // a run still going: no row.
        if (output.state !== OUTPUT_STATE.failed && !failed) continue;
        const error = output.error ?? item.error ?? 'not downloaded';
        rows.push(failedOutputRow(common, creditsCost, output, false, error));
        continue;
      }
      if (output.state === OUTPUT_STATE.failed && output.url === null) {
        // A copy the service failed: only failed copies are refunded within
        // a succeeded attempt, so the attempt's refund is theirs.
        const refunded = (winning?.refundedCredits ?? 0) > 0;
        const error = output.error ?? 'generation failed';
        rows.push(failedOutputRow(common, creditsCost, output, refunded, error));
        continue;
      }
      const row = fileRow(common, creditsCost, output);
      if (row) rows.push(row);
    }
    return;
  }
  if (isStateIn(FAILED_ITEM_STATES, item.state)) {
    rows.push({
      ...itemColumns(source, item, last),
      ...(last ? { attempt: last.attemptNo } : {}),
      generationId: last?.generationIds[0] ?? null,
      status: item.state,
      creditsCost: last ? last.chargedCost : null,
      refunded: (last?.refundedCredits ?? 0) > 0,
      url: null,
      error: item.error ?? item.state,
      at: isoOf(item.updatedAt),
    });
  }
}

/** Records by item key, in their order. */
function groupByItem<T extends { readonly itemKey: string }>(
  records: readonly T[],
): Map<string, T[]> {
  const byItem = new Map<string, T[]>();
  for (const record of records) {
    const list = byItem.get(record.itemKey);
    if (list) list.push(record);
    else byItem.set(record.itemKey, [record]);
  }
  return byItem;
}

/**
 * Each row with the decision in force on its output (`ReviewIndex`: the newer
 * of its own and its whole item's). Decisions name the run that made the
 * output, so a remade item's new row starts unreviewed.
 */
function withReviews(rows: ManifestRow[], index: ReviewIndex): ManifestRow[] {
  return rows.map((row) => {
    const review = index.of(row.runId ?? '', row.item, row.n ?? null);
    if (!review) return row;
    return {
      ...row,
      review: review.decision,
      reviewer: review.reviewer,
      reviewedAt: isoOf(review.at),
      ...(review.note ? { note: review.note } : {}),
    };
  });
}
