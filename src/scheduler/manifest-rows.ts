/**
 * Manifest rows rebuilt from the journal (the source of truth). One run's
 * rows: one per downloaded output, one per copy the service failed, one per
 * item that failed for good. The folder's rows: those of every run of the job
 * that wrote into the folder, oldest run first, each marked `current` or not,
 * so a re-run that regenerates an item keeps the earlier files listed.
 */
import path from 'node:path';
import {
  ATTEMPT_STATE,
  type AttemptRecord,
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
import {
  type DescribedItems,
  type ManifestRow,
  markCurrentRows,
  retiredItemsOnDisk,
} from '../outputs/index.js';

/** More runs than any journal holds: `listRuns` then returns all of them. */
const EVERY_RUN = 1_000_000;

/** The output folder a run recorded when it started, if any. */
export function recordedOutputDir(run: RunRecord): string | undefined {
  const dir = (run.options as { outputDir?: unknown } | null)?.outputDir;
  return typeof dir === 'string' ? path.resolve(dir) : undefined;
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
  const runs = runsInFolder(journal, outputDir, run.jobName);
  if (!runs.some((r) => r.runId === run.runId)) runs.push(run);
  return runs;
}

/**
 * The manifest of `outputDir` as `run` leaves it, in memory (the review
 * page's listing): every run of its job there, in run order, marked
 * `current` (src/outputs/current.ts; `described`: the items the job file
 * describes now). Rows of `existing` whose run this journal does not know
 * come first (see folderRowSource).
 */
export function folderManifestRows(
  journal: Journal,
  run: RunRecord,
  outputDir: string,
  described: DescribedItems | undefined,
  existing: readonly ManifestRow[] = [],
): ManifestRow[] {
  const foreign = [...existing].filter(isForeignRow(journal));
  // One read: its pages see one state of the journal (see Journal.snapshot).
  const judged = describedOrRetiredOnDisk(outputDir, described);
  return journal.snapshot(() =>
    markCurrentRows([...folderRowSource(journal, run, outputDir, foreign)()], judged),
  );
}

/**
 * `described` (the items the job file describes now) when known; else, so
 * that a reader without the job file agrees with the last rewrite that had
 * it, every item but those the manifest on disk says were removed from the
 * job.
 */
export function describedOrRetiredOnDisk(
  outputDir: string,
  described: DescribedItems | undefined,
): DescribedItems {
  if (described) return described;
  const retired = retiredItemsOnDisk(outputDir);
  return { has: (item) => !retired.has(item) };
}

/**
 * Whether a manifest row is of a run this journal does not know (a lost
 * journal's, another's): such rows are kept as they are on disk, the rest is
 * rebuilt. One lookup per run, not per row (a folder holds 100,000 rows of a
 * few runs).
 */
export function isForeignRow(journal: Journal): (row: ManifestRow) => boolean {
  const known = new Map<string, boolean>();
  return (row) => {
    if (!row.runId) return true;
    let found = known.get(row.runId);
    if (found === undefined) {
      found = journal.getRun(row.runId) !== undefined;
      known.set(row.runId, found);
    }
    return !found;
  };
}

/**
 * The rows of `outputDir`'s manifest as `run` leaves it, not yet marked
 * `current`, as a source that reads them again from the journal page by page
 * each time it is iterated (the manifest writer goes over them twice, and
 * never holds them all): `foreign` (rows on disk of runs this journal does
 * not know: the manifest describes the folder, and those files are still in
 * it) first, then every run of the job in the folder, oldest first.
 */
export function folderRowSource(
  journal: Journal,
  run: RunRecord,
  outputDir: string,
  foreign: readonly ManifestRow[] = [],
): () => Iterable<ManifestRow> {
  const runs = folderRuns(journal, run, outputDir);
  // Every run here is the job's: its decisions are read once for all of them.
  const reviews = new ReviewIndex(journal.latestReviews(run.jobName));
  const influencers = jobInfluencers(journal, run.jobName);
  return function* rows() {
    yield* foreign;
    for (const r of runs)
      for (const page of runManifestRowPages(journal, r.runId, reviews, influencers)) yield* page;
  };
}

/** Items read at once when rows are rebuilt: bounded memory at 100,000 items. */
const ITEMS_PER_PAGE = 1000;

/** A run's items, a page at a time, in insertion order. */
function* itemPages(journal: Journal, runId: string): Generator<ItemRecord[]> {
  let after: string | undefined;
  for (;;) {
    const items = journal.listItems(runId, {
      limit: ITEMS_PER_PAGE,
      ...(after === undefined ? {} : { after }),
    });
    const last = items.at(-1);
    if (!last) return;
    after = last.itemKey;
    yield items;
  }
}

/**
 * The rows of one run, a page of items at a time (each page's attempts and
 * outputs read in one query each: per item, a 20,000-item run's rows took
 * seconds; the whole run at once held all of it in memory).
 */
function* runManifestRowPages(
  journal: Journal,
  runId: string,
  reviews: ReviewIndex,
  influencers: JobInfluencers,
): Generator<ManifestRow[]> {
  for (const items of itemPages(journal, runId)) {
    const keys = items.map((item) => item.itemKey);
    const outputs = groupByItem(journal.listOutputsOfItems(runId, keys));
    const attempts = groupByItem(journal.listAttemptsOfItems(runId, keys));
    const rows: ManifestRow[] = [];
    for (const item of items) {
      if (item.kind === 'training') continue;
      itemRows(
        { journal, influencers },
        item,
        attempts.get(item.itemKey) ?? [],
        outputs.get(item.itemKey) ?? [],
        rows,
      );
    }
    yield withReviews(rows, reviews);
  }
}

/**
 * Appends the rows of one item to `rows`. Which rows get a file is said once
 * more in SQL by the journal's `listOutputFiles` (the lean read `status`
 * counts reviews with): test/review/review-counts.test.ts holds them equal.
 */
function itemRows(
  source: RowSource,
  item: ItemRecord,
  attempts: readonly AttemptRecord[],
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

/** The attempt whose generation made an item's outputs. */
export function succeededAttempt(attempts: readonly AttemptRecord[]): AttemptRecord | undefined {
  return attempts.find((a) => a.state === ATTEMPT_STATE.succeeded);
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

/**
 * The row of one output just downloaded (what the download stage appends
 * while the run goes on): the row the end-of-run rebuild will write, marked
 * `current` (the rows it supersedes are marked at that rebuild).
 */
export function downloadedOutputRow(
  journal: Journal,
  output: Pick<OutputRecord, 'runId' | 'itemKey' | 'n'>,
): ManifestRow | undefined {
  const item = journal.getItem(output.runId, output.itemKey);
  const record = journal.getOutput(output.runId, output.itemKey, output.n);
  if (!item || !record) return undefined;
  const winning = succeededAttempt(journal.listAttempts(output.runId, output.itemKey));
  // The job's influencers are read only for a row that was made with one.
  const jobName = influencerIdOf(winning) && journal.getRun(output.runId)?.jobName;
  const influencers = jobName ? jobInfluencers(journal, jobName) : NO_INFLUENCERS;
  const common = {
    ...itemColumns({ journal, influencers }, item, winning),
    attempt: winning?.attemptNo,
  };
  const row = fileRow(common, generationCharge(winning), record);
  return row ? { ...row, current: true } : undefined;
}

type ItemColumns = ReturnType<typeof itemColumns>;

/** The row of an output with no file: a copy the service failed, or a download that failed. */
function failedOutputRow(
  common: ItemColumns & { attempt: number | undefined },
  creditsCost: number | null,
  output: OutputRecord,
  refunded: boolean,
  error: string,
): ManifestRow {
  return {
    ...common,
    n: output.n,
    generationId: output.generationId,
    status: ITEM_STATE.failed,
    creditsCost,
    refunded,
    url: output.url,
    error,
    at: isoOf(output.updatedAt),
  };
}

/** The row of a downloaded output file, or undefined when it is not downloaded. */
function fileRow(
  common: ItemColumns & { attempt: number | undefined },
  creditsCost: number | null,
  output: OutputRecord,
): ManifestRow | undefined {
  if (output.state !== OUTPUT_STATE.downloaded || !output.file || !output.sha256) return undefined;
  return {
    ...common,
    n: output.n,
    generationId: output.generationId,
    status: ITEM_STATE.succeeded,
    creditsCost,
    refunded: false,
    url: output.url,
    file: output.file,
    sha256: output.sha256,
    ...(output.bytes !== null ? { bytes: output.bytes } : {}),
    ...(output.contentType ? { contentType: output.contentType } : {}),
    at: isoOf(output.updatedAt),
  };
}

/** What a row is built from: the journal, and the job's trained influencers by influencerId. */
interface RowSource {
  readonly journal: Journal;
  readonly influencers: JobInfluencers;
}

/** A job's job-local influencers by the service's influencerId (what the manifest names them by). */
type JobInfluencers = ReadonlyMap<
  string,
  { readonly localId: string; readonly configHash: string }
>;
const NO_INFLUENCERS: JobInfluencers = new Map();

function jobInfluencers(journal: Journal, jobName: string): JobInfluencers {
  const byId = new Map<string, { localId: string; configHash: string }>();
  for (const record of journal.listJobInfluencers(jobName))
    if (record.influencerId && record.status === 'succeeded')
      byId.set(record.influencerId, { localId: record.localId, configHash: record.configHash });
  return byId;
}

/**
 * The job-local influencer an attempt was sent with (its request's
 * influencerId, when the job trained it): what adoption needs to reuse it.
 */
function influencerColumns(influencers: JobInfluencers, attempt: AttemptRecord | undefined) {
  const id = influencerIdOf(attempt);
  const local = id === undefined ? undefined : influencers.get(id);
  if (id === undefined || !local) return {};
  return { influencer: local.localId, influencerId: id, influencerConfig: local.configHash };
}

/** The influencerId an attempt's request carried, if any. */
function influencerIdOf(attempt: AttemptRecord | undefined): string | undefined {
  const id = (attempt?.request as { influencerId?: unknown } | null)?.influencerId;
  return typeof id === 'string' ? id : undefined;
}

/** What every row of an item says: where it belongs, its values, its prompt, its source file. */
function itemColumns(
  { journal, influencers }: RowSource,
  item: ItemRecord,
  attempt: AttemptRecord | undefined,
) {
  const prompt = promptOf(item);
  const vars = varsOf(item);
  const sourceFile = item.sourceItemKey ? sourceFileOf(journal, item.runId, attempt) : undefined;
  return {
    runId: item.runId,
    step: item.stepId,
    item: item.itemKey,
    kind: item.kind === 'video' ? ('video' as const) : ('image' as const),
    modelId: item.modelId ?? '',
    label: item.label,
    ...(vars ? { vars } : {}),
    ...(prompt ? { prompt } : {}),
    ...(sourceFile ? { sourceFile } : {}),
    ...influencerColumns(influencers, attempt),
  };
}

/**
 * The charge of one generation of an attempt: a request for N copies makes N
 * generations charged together, each its share (what the service reports per
 * id); totals count each generation once.
 */
function generationCharge(attempt: AttemptRecord | undefined): number | null {
  if (!attempt) return null;
  return attempt.chargedCost / Math.max(1, attempt.generationIds.length);
}

/** The file of the output a `from:` attempt was made from (its request's `generationId`). */
function sourceFileOf(
  journal: Journal,
  runId: string,
  attempt: AttemptRecord | undefined,
): string | undefined {
  const id = (attempt?.request as { generationId?: unknown } | null)?.generationId;
  if (typeof id !== 'string') return undefined;
  return journal.findDownloadedOutput(id, runId)?.file ?? undefined;
}

type VarValue = string | number | boolean | null;

/** The item's template values as the manifest stores them (null for items of older journals). */
function varsOf(item: ItemRecord): Record<string, VarValue> | undefined {
  if (!item.vars) return undefined;
  const vars: Record<string, VarValue> = {};
  for (const [name, value] of Object.entries(item.vars)) {
    const plain =
      value === null || ['string', 'number', 'boolean'].includes(typeof value)
        ? (value as VarValue)
        : JSON.stringify(value);
    vars[name] = plain;
  }
  return vars;
}

const isoOf = (ms: number): string => new Date(ms).toISOString();

function promptOf(item: ItemRecord): string | undefined {
  const request = item.request as { input?: { prompt?: unknown } } | null;
  const prompt = request?.input?.prompt;
  return typeof prompt === 'string' ? prompt : undefined;
}
