/**
 * Which items of the output folder's manifest the journal leaves to it
 * (adopt-manifest.ts): adoption works item by item, whatever else the
 * journal holds. A lost journal leaves every item; a stale one (last night's,
 * restored beside tonight's folder) leaves the items made since; a current
 * one leaves none, and costs one read per run the manifest names to say so
 * (`keptByJournal`: those rows are not even validated).
 *
 * The journal keeps an item when:
 * - it recorded the very make the manifest row describes (the row's run
 *   succeeded for the item there): the journal knows what that make was
 *   made from and decides, done or changed;
 * - it shows the item done (its latest record succeeded with the identity
 *   the job file describes now);
 * - it shows the item in flight (an open attempt: the key may have reached
 *   the service, and the resume finishes it with that key, never a new one);
 * - its latest record is an attempted item of an unfinished run: the resume
 *   drives it with that run's keys.
 *
 * An unfinished run's item never attempted is left to the manifest: the
 * adoption takes it out of that run (`release`), so the resume does not make it.
 */
import type { JobItem } from '../job/index.js';
import {
  FINISHED_RUN_STATUSES,
  ITEM_STATE,
  type ItemHistoryRow,
  type Journal,
} from '../journal/index.js';
import { isRowOfJob, type ManifestRow, type RawRow } from '../outputs/index.js';
import { scopedLatest } from './decide/run-history.js';

/** The journal reads the choice needs (a read-only journal offers them). */
export type CandidateJournal = Pick<
  Journal,
  'recordedItemState' | 'succeededItemKeys' | 'latestItems' | 'getOpenAttempt' | 'getRun'
>;

/** An item the journal leaves to the manifest. */
export interface Candidate {
  /** The unfinished run holding the item, never attempted: the adoption takes it out. */
  readonly release?: string;
  /** The journal's latest record of the item succeeded with this identity (since changed, or the item is done). */
  readonly madeAs?: string;
}

/**
 * The keys of `groups` (each item's latest manifest rows) the journal leaves
 * to the manifest, before the job file's identity decides the `madeAs` ones.
 */
export function itemsLeftToManifest(
  journal: CandidateJournal | undefined,
  jobName: string,
  service: string,
  groups: ReadonlyMap<string, readonly ManifestRow[]>,
): Map<string, Candidate> {
  const left = new Map<string, Candidate>();
  for (const [key, rows] of groups) {
    const runId = rows[0]?.runId;
    const recorded =
      runId === undefined ? undefined : journal?.recordedItemState(runId, key, service);
    if (recorded?.state !== ITEM_STATE.succeeded) left.set(key, {});
  }
  if (!journal || left.size === 0) return left;
  const latest = scopedLatest(journal, jobName, { service });
  for (const key of [...left.keys()]) {
    const record = latest.get(key);
    if (!record) continue;
    const candidate = journalLeaves(journal, record, service);
    if (candidate) left.set(key, candidate);
    else left.delete(key);
  }
  return left;
}

/**
 * Whether a manifest line, as written, is a row of one of the job's items
 * (`keys`) that the journal recorded succeeded in the row's own run: the
 * journal keeps that item (the first rule above), so adoption need not
 * validate or hold the row. One journal read per run the manifest names.
 */
export function keptByJournal(
  journal: CandidateJournal | undefined,
  jobName: string,
  keys: ReadonlySet<string>,
  service: string,
): (raw: RawRow) => raw is RawRow & { readonly item: string } {
  const succeeded = new Map<string, ReadonlySet<string>>();
  return (raw): raw is RawRow & { readonly item: string } => {
    const { runId, item } = raw;
    if (!journal || typeof runId !== 'string' || typeof item !== 'string') return false;
    // A row naming an influencer is read whole: the influencer may be adopted.
    if (raw.influencerId !== undefined || !keys.has(item)) return false;
    if (!isRowOfJob(raw as Pick<ManifestRow, 'job'>, jobName)) return false;
    const done = succeeded.get(runId) ?? journal.succeededItemKeys(runId, service);
    succeeded.set(runId, done);
    return done.has(item);
  };
}

/** What the journal's latest record of an item leaves to the manifest (see the module comment). */
function journalLeaves(
  journal: CandidateJournal,
  record: ItemHistoryRow,
  service: string,
): Candidate | undefined {
  const { runId, itemKey } = record;
  if (journal.getOpenAttempt(runId, itemKey)) return undefined;
  if (record.state === ITEM_STATE.succeeded) return { madeAs: record.requestHash };
  const run = journal.getRun(runId);
  if (!run || FINISHED_RUN_STATUSES.includes(run.status)) return {};
  const attempted = (journal.recordedItemState(runId, itemKey, service)?.attemptsUsed ?? 0) > 0;
  return attempted ? undefined : { release: runId };
}

/** The candidates the job file's items do not show done: `madeAs` another identity, or none. */
export function notDone(
  left: ReadonlyMap<string, Candidate>,
  whole: ReadonlyMap<string, JobItem>,
  identity: (item: JobItem) => string,
): Map<string, Candidate> {
  const kept = new Map<string, Candidate>();
  for (const [key, candidate] of left) {
    const item = whole.get(key);
    if (!item) continue;
    if (candidate.madeAs !== undefined && candidate.madeAs === identity(item)) continue;
    kept.set(key, candidate);
  }
  return kept;
}
