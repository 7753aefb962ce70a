/**
 * What the review page (and `ibatch review --json`) lists: the job's current
 * outputs of every run that wrote into its output folder, each with its
 * review decision in force (`ReviewIndex`), the outputs made from it (a
 * rejected source shows what depends on it) and the spend. Built from the
 * journal alone; the server keeps it until the journal changes (server.ts),
 * so decisions made by `approve`/`reject` or another page appear.
 */
import {
  type Journal,
  REVIEW_DECISION,
  ReviewIndex,
  type ReviewRecord,
  serviceOfRun,
} from '../../journal/index.js';
import {
  type CostSummary,
  type DescribedItems,
  folderManifestRows,
  type ManifestRow,
  readerOutputDir,
  recordedOutputDir,
  summarizeCosts,
} from '../../outputs/index.js';
import { redactDeep, UsageError } from '../../shared/index.js';
import { newestRunOf } from '../outputs.js';

export type ReviewState = 'approved' | 'rejected' | 'unreviewed';

export interface ReviewedOutput {
  /** `runId/item/n`: what a decision names. */
  readonly id: string;
  readonly runId: string;
  readonly step: string;
  readonly item: string;
  readonly n: number | null;
  readonly kind: ManifestRow['kind'];
  readonly status: ManifestRow['status'];
  readonly file: string | null;
  readonly contentType: string | null;
  readonly modelId: string;
  readonly label: string | null;
  readonly vars: NonNullable<ManifestRow['vars']>;
  readonly prompt: string | null;
  readonly creditsCost: number | null;
  readonly at: string | null;
  readonly error: string | null;
  readonly sourceFile: string | null;
  /** Files of the outputs made from this one (its image-to-video clips). */
  readonly dependants: string[];
  readonly review: ReviewState;
  readonly reviewer: string | null;
  readonly reviewedAt: string | null;
  readonly note: string | null;
  /** The prompt a rejection edited for the item's next attempt. */
  readonly editedPrompt: string | null;
}

export interface ReviewListing {
  readonly jobName: string;
  readonly outputDir: string;
  readonly outputs: ReviewedOutput[];
  readonly spend: CostSummary;
  /** What the journal recorded of each listed file: only those bytes are served. */
  readonly recorded: ReadonlyMap<string, RecordedFile>;
}

export interface RecordedFile {
  readonly sha256: string;
  readonly bytes: number | undefined;
}

/**
 * The listing of `jobName` (a usage error when the journal has no run of
 * it): current outputs only (src/outputs/current.ts; `described`: the items
 * the job file describes now).
 */
export function buildListing(
  journal: Journal,
  jobName: string,
  described?: DescribedItems,
  /** The job's output folder on this machine (readerOutputDir): where another machine's run is read. */
  here?: string,
): ReviewListing {
  const newest = newestRunOf(journal, jobName);
  const outputDir = here === undefined ? recordedOutputDir(newest) : readerOutputDir(newest, here);
  if (!outputDir) throw new UsageError(`run ${newest.runId} has no output folder recorded`);
  const rows = folderManifestRows(journal, newest, outputDir, described);
  const current = rows.filter((r) => r.current);
  const decisions = new ReviewIndex(journal.latestReviews(jobName));
  const dependants = new Map<string, string[]>();
  for (const row of current) {
    if (!row.sourceFile || !row.file) continue;
    dependants.set(row.sourceFile, [...(dependants.get(row.sourceFile) ?? []), row.file]);
  }
  const outputs = current.map((row) => ({
    id: outputId(row.runId ?? '', row.item, row.n ?? null),
    runId: row.runId ?? '',
    step: row.step,
    item: row.item,
    n: row.n ?? null,
    kind: row.kind,
    status: row.status,
    file: row.file ?? null,
    contentType: row.contentType ?? null,
    modelId: row.modelId,
    label: row.label ?? null,
    vars: row.vars ?? {},
    prompt: row.prompt ?? null,
    creditsCost: row.creditsCost,
    at: row.at ?? null,
    error: row.error ?? null,
    sourceFile: row.sourceFile ?? null,
    dependants: row.file ? (dependants.get(row.file) ?? []) : [],
    ...reviewFields(decisions.of(row.runId ?? '', row.item, row.n ?? null)),
  }));
  // The total is the job's spend as the journal sums it (budgetStanding, what
  // `status`, `costs` and the report say, trainings included); the steps'
  // lines sum every run's rows (an older, superseded file was paid for too).
  const standing = journal.budgetStanding(
    { name: jobName, budget: newest.budget },
    serviceOfRun(newest),
  );
  const spend = summarizeCosts(rows, [], standing);
  // Error texts and notes can quote the service: redacted like every sink.
  const listing = {
    ...redactDeep({ jobName, outputDir, outputs, spend }),
    recorded: recordedFiles(current),
  };
  // Each output's search text is made with the listing, not at the first
  // filter, which a person typing is waiting on.
  for (const output of listing.outputs) searchText(output);
  return listing;
}

function recordedFiles(rows: readonly ManifestRow[]): Map<string, RecordedFile> {
  const recorded = new Map<string, RecordedFile>();
  for (const row of rows) {
    if (row.file && row.sha256) recorded.set(row.file, { sha256: row.sha256, bytes: row.bytes });
  }
  return recorded;
}

export const outputId = (runId: string, item: string, n: number | null): string =>
  `${runId}/${item}/${n ?? ''}`;

type ReviewFields = Pick<
  ReviewedOutput,
  'review' | 'reviewer' | 'reviewedAt' | 'note' | 'editedPrompt'
>;

/** What an output shows of the decision in force on it (none, or a cleared one: unreviewed). */
function reviewFields(decision: ReviewRecord | undefined): ReviewFields {
  const review: ReviewState =
    decision?.decision === REVIEW_DECISION.approved
      ? 'approved'
      : decision?.decision === REVIEW_DECISION.rejected
        ? 'rejected'
        : 'unreviewed';
  if (review === 'unreviewed' || !decision) {
    return { review, reviewer: null, reviewedAt: null, note: null, editedPrompt: null };
  }
  return {
    review,
    reviewer: decision.reviewer,
    reviewedAt: new Date(decision.at).toISOString(),
    note: decision.note ?? null,
    editedPrompt: review === 'rejected' ? decision.prompt : null,
  };
}

// Each listing's outputs by item (positions in `outputs`): a decision names
// items, and a search over all 100,000 outputs per target was quadratic.
const itemIndexes = new WeakMap<ReviewListing, Map<string, number[]>>();

function itemIndex(listing: ReviewListing): Map<string, number[]> {
  let index = itemIndexes.get(listing);
  if (!index) {
    index = new Map();
    for (const [i, o] of listing.outputs.entries()) {
      const key = outputId(o.runId, o.item, null);
      const positions = index.get(key);
      if (positions) positions.push(i);
      else index.set(key, [i]);
    }
    itemIndexes.set(listing, index);
  }
  return index;
}

/** The positions in `listing.outputs` of output `n` of an item made by `runId` (`n` null: all of them). */
export function positionsOf(
  listing: ReviewListing,
  runId: string,
  item: string,
  n: number | null,
): number[] {
  const all = itemIndex(listing).get(outputId(runId, item, null)) ?? [];
  return n === null ? all : all.filter((i) => listing.outputs[i]?.n === n);
}

/**
 * The listing once `recorded` (decisions this server just committed, oldest
 * first) hold: the same outputs in the same places, only the review fields
 * of those they name changed. What a rebuild would show, since the decision
 * just recorded is the newest on every output it names (`ReviewIndex`), and
 * at 100,000 outputs a rebuild takes seconds per keypress.
 */
export function withDecisions(
  listing: ReviewListing,
  recorded: readonly ReviewRecord[],
): ReviewListing {
  const outputs = [...listing.outputs];
  for (const review of recorded) {
    const fields = redactDeep(reviewFields(review));
    for (const i of positionsOf(listing, review.runId, review.itemKey, review.n)) {
      const output = outputs[i];
      if (output) outputs[i] = { ...output, ...fields };
    }
  }
  const next = { ...listing, outputs };
  itemIndexes.set(next, itemIndex(listing));
  return next;
}

export interface ListingFilter {
  readonly step?: string;
  readonly status?: string;
  readonly review?: string;
  /** Case-insensitive text in the prompt, values, label, item, file or note. */
  readonly q?: string;
}

/** The outputs a filter keeps (an empty field keeps everything). */
export function filterOutputs(
  outputs: readonly ReviewedOutput[],
  filter: ListingFilter,
): ReviewedOutput[] {
  const q = filter.q?.trim().toLowerCase();
  return outputs.filter(
    (o) =>
      (!filter.step || o.step === filter.step) &&
      (!filter.status || o.status === filter.status) &&
      (!filter.review || o.review === filter.review) &&
      (!q || searchText(o).includes(q)),
  );
}

// Each output's text, kept while its listing lives: a filter over 10,000
// outputs then only searches strings (the page filters as the user types).
const searchTexts = new WeakMap<ReviewedOutput, string>();

function searchText(o: ReviewedOutput): string {
  let text = searchTexts.get(o);
  if (text === undefined) {
    text = [o.prompt, o.label, o.item, o.file, o.note, o.modelId, ...Object.values(o.vars)]
      .filter((v) => v !== null && v !== undefined)
      .join('\n')
      .toLowerCase();
    searchTexts.set(o, text);
  }
  return text;
}

/** What the page's header and filters show besides the cards. */
export function summaryOf(listing: ReviewListing) {
  const counts: Record<ReviewState, number> = { approved: 0, rejected: 0, unreviewed: 0 };
  for (const o of listing.outputs) counts[o.review] += 1;
  return {
    spend: listing.spend,
    counts,
    steps: [...new Set(listing.outputs.map((o) => o.step))],
    statuses: [...new Set(listing.outputs.map((o) => o.status))],
  };
}
