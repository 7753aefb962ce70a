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
  type ReviewDecision,
  ReviewIndex,
} from '../../journal/index.js';
import { type CostSummary, type ManifestRow, summarizeCosts } from '../../outputs/index.js';
import { folderManifestRows, recordedOutputDir } from '../../scheduler/index.js';
import { redactDeep, UsageError } from '../../shared/index.js';

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
}

/** The listing of `jobName` (a usage error when the journal has no run of it). */
export function buildListing(journal: Journal, jobName: string): ReviewListing {
  const newest = journal.listRuns(jobName, 1)[0];
  if (!newest) throw new UsageError(`No run of job "${jobName}" in the journal ${journal.path}`);
  const outputDir = recordedOutputDir(newest);
  if (!outputDir) throw new UsageError(`run ${newest.runId} has no output folder recorded`);
  const rows = folderManifestRows(journal, newest, outputDir);
  const current = rows.filter((r) => r.current);
  const decisions = new ReviewIndex(journal.latestReviews(jobName));
  const dependants = new Map<string, string[]>();
  for (const row of current) {
    if (!row.sourceFile || !row.file) continue;
    dependants.set(row.sourceFile, [...(dependants.get(row.sourceFile) ?? []), row.file]);
  }
  const outputs = current.map((row) => {
    const decision = decisions.of(row.runId ?? '', row.item, row.n ?? null);
    return {
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
      review: stateOf(decision?.decision),
      reviewer: decision?.reviewer ?? null,
      reviewedAt: decision ? new Date(decision.at).toISOString() : null,
      note: decision?.note ?? null,
      editedPrompt: decision?.decision === REVIEW_DECISION.rejected ? decision.prompt : null,
    };
  });
  // Every run's rows count (an older, superseded file was paid for too).
  // Error texts and notes can quote the service: redacted like every sink.
  return redactDeep({ jobName, outputDir, outputs, spend: summarizeCosts(rows) });
}

export const outputId = (runId: string, item: string, n: number | null): string =>
  `${runId}/${item}/${n ?? ''}`;

function stateOf(decision: ReviewDecision | undefined): ReviewState {
  if (decision === REVIEW_DECISION.approved) return 'approved';
  if (decision === REVIEW_DECISION.rejected) return 'rejected';
  return 'unreviewed';
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
