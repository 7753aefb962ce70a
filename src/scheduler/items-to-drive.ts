/**
 * What a run drives, read as its item window asks for it: the run's items
 * not ended, in job order, each expanded from the job (a batch at a time)
 * and given its recorded request only when the window reaches it, and the
 * sources they wait on that nobody makes now. Nothing here holds a whole
 * item of the job beyond the batch being driven.
 */
import type { JobItem, LoadedStep } from '../job/index.js';
import {
  type ItemRecord,
  isStateIn,
  type Journal,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import type { DesiredState, ItemVerdict } from '../plan/index.js';
import type { PlanItem, PlanItems } from './decide/plan-items.js';
import { outputIdsReader } from './decide/run-history.js';
import { settleGraph } from './generation-item.js';
import type { ItemGraph } from './item-graph.js';

export type Driven = { readonly item: JobItem; readonly step: LoadedStep };

/** What a run's driven items are read from (`driveSource`). */
export interface DriveSource {
  readonly journal: Journal;
  readonly runId: string;
  /** The job's items as lean records (plan-items.ts). */
  readonly items: PlanItems;
  readonly steps: ReadonlyMap<string, LoadedStep>;
  /** The verdicts of the decision the run was selected by: the keys the job file describes. */
  readonly verdicts: ReadonlyMap<string, ItemVerdict>;
  /**
   * 1 at the index of each of `items`'s lean records whose item had ended in
   * this run when it was selected: passed over without a read.
   */
  readonly endedBefore: Uint8Array;
  /** Whole items expanded at once. @default `expandBatch` of the job's items */
  readonly batch?: number;
}

/**
 * The drive's source, taken from the decision now: what it needs of the
 * latest records is a byte per item, so the records can be let go
 * (`releaseLatest`) before the first item is driven.
 */
export function driveSource(
  base: Omit<DriveSource, 'verdicts' | 'endedBefore'>,
  state: DesiredState,
): DriveSource {
  const all = base.items.items;
  const { latest } = state;
  const endedBefore = new Uint8Array(all.length);
  for (let at = 0; at < all.length; at++) {
    const lean = all[at];
    const row = lean && latest.get(lean.key);
    if (row && row.runId === base.runId && ended(row.state)) endedBefore[at] = 1;
  }
  return { ...base, verdicts: state.verdicts, endedBefore };
}

/**
 * How many whole items are expanded from the job at once: each batch scans
 * the job again up to its last item, so a run makes a few such scans
 * (never more than sixteen), and holds a sixteenth of its items whole at most.
 */
export function expandBatch(items: number): number {
  return Math.max(2048, Math.ceil(items / 16));
}

/**
 * How many items a run drives in its first batch: a resume reads their keys
 * before the job is checked (run-job.ts) and the check keeps them whole, so
 * its first create waits for no scan of the job up to where it stopped.
 * The size is an assumption: well above what the item window holds at once
 * (itemWindowBound), small enough that holding them whole costs little.
 */
export const FIRST_BATCH = 512;

const ended = (state: string): boolean => isStateIn(TERMINAL_ITEM_STATES, state);

/** How many items of the run (of the job's steps) there are, and how many ended already. */
export function runItemCounts(source: Pick<DriveSource, 'journal' | 'runId' | 'steps'>): {
  total: number;
  ended: number;
} {
  let total = 0;
  let endedItems = 0;
  for (const { stepId, states } of source.journal.progressByStep(source.runId)) {
    if (!source.steps.has(stepId)) continue;
    for (const [state, n] of Object.entries(states)) {
      total += n ?? 0;
      if (ended(state)) endedItems += n ?? 0;
    }
  }
  return { total, ended: endedItems };
}

/**
 * What a run drives, lazily: first the paid attempts of items the job file
 * no longer describes (finished as they were sent, no retry), then the job
 * items the run holds that are not ended, with their recorded request (a
 * rejected item's remake, remake.ts), in job order; an item the job file
 * changed since its attempt was paid is finished as sent too. Items of the
 * run that had ended when it was selected are passed over without a read:
 * a resume at item 75,000 of 100,000 reads only what it still drives.
 */
export function* drivenItems(source: DriveSource): Generator<Driven> {
  const { journal, runId, items, steps, verdicts, endedBefore } = source;
  for (const attempt of journal.listOpenAttempts(runId)) {
    if (verdicts.has(attempt.itemKey)) continue;
    const record = journal.getItem(runId, attempt.itemKey);
    const step = record ? steps.get(record.stepId) : undefined;
    if (record && step && !ended(record.state))
      yield { item: asSent(record, undefined), step: { ...step, retries: 0 } };
  }
  const all = items.items;
  const size = source.batch ?? expandBatch(all.length);
  let at = 0;
  let limit = Math.min(size, FIRST_BATCH);
  while (at < all.length) {
    const batch = new Map<string, { lean: PlanItem; record: ItemRecord }>();
    // The records of as many items as the batch lacks, in one read each
    // time (one read per item is a round trip each on PostgreSQL).
    while (at < all.length && batch.size < limit) {
      const candidates: PlanItem[] = [];
      for (; at < all.length && candidates.length < limit - batch.size; at++) {
        const lean = all[at];
        if (!lean || endedBefore[at] === 1) continue;
        candidates.push(lean);
      }
      const records = journal.getItemsOfKeys(
        runId,
        candidates.map((lean) => lean.key),
      );
      for (const lean of candidates) {
        const record = records.get(lean.key);
        if (record && steps.has(record.stepId) && !ended(record.state))
          batch.set(lean.key, { lean, record });
      }
    }
    limit = size;
    const whole = items.jobItems(new Set(batch.keys()));
    for (const [key, { lean, record }] of batch) {
      const step = steps.get(record.stepId);
      if (!step) continue;
      const jobItem = whole.get(key);
      if (jobItem && lean.identity === record.requestHash) {
        // Sent as recorded: the job file's request, or a rejected item's remake.
        yield { item: { ...jobItem, request: record.request as JobItem['request'] }, step };
      } else if (journal.getOpenAttempt(runId, key)) {
        yield { item: asSent(record, jobItem), step: { ...step, retries: 0 } };
      }
    }
    // A suspended generator keeps its whole frame: without this, a batch
    // driven already (its records, its whole items) stays alive beside the
    // next one for as long as that is driven.
    batch.clear();
    whole.clear();
  }
}

/**
 * The items some job item of the run may wait on (`from:`): the sources of
 * the job's items not done. Only `from:` steps give any.
 */
export function sourcesOf(items: PlanItems, state: DesiredState): Set<string> {
  const sources = new Set<string>();
  for (const item of items.items) {
    if (item.source && state.verdicts.get(item.key) !== 'done') sources.add(item.source.itemKey);
  }
  return sources;
}

/**
 * Settles in the graph the sources the driven items wait on and nobody will
 * make now: items of the run that ended already, done ones with their
 * recorded outputs, and job items this run does not make. A source the run
 * still drives settles as it ends.
 */
export function settleSources(
  source: DriveSource,
  state: DesiredState,
  sources: ReadonlySet<string>,
  graph: ItemGraph,
): void {
  const { journal, runId, steps } = source;
  const outputIds = outputIdsReader(journal);
  const notMade: string[] = [];
  for (const key of sources) {
    const stored = journal.getItem(runId, key);
    if (stored && steps.has(stored.stepId)) {
      // An item of the run (of a step of the job) that ended: settled as it ended.
      if (ended(stored.state))
        settleGraph({ journal, runId }, graph, key, stored.state, stored.error);
      continue;
    }
    const latest = state.latest.get(key);
    if (state.verdicts.get(key) === 'done' && latest) {
      graph.succeeded(key, { generationIds: outputIds(latest.runId, key) });
    } else notMade.push(key);
  }
  if (notMade.length === 0) return;
  const whole = source.items.jobItems(new Set(notMade));
  for (const key of notMade) {
    const item = whole.get(key);
    const name = item ? `${item.stepId}/${item.label}` : key;
    graph.failed(key, `${name} is not made by this run`);
  }
}

/** A journal item as its open attempt was sent (the job file describes it differently now). */
function asSent(record: ItemRecord, jobItem: JobItem | undefined): JobItem {
  return {
    stepId: record.stepId,
    key: record.itemKey,
    label: record.label,
    name: jobItem?.name ?? record.label,
    modelId: record.modelId ?? jobItem?.modelId ?? '',
    kind: (record.kind === 'video' ? 'video' : 'image') as JobItem['kind'],
    request: record.request as JobItem['request'],
    expectedOutputs: record.expectedOutputs,
    vars: jobItem?.vars ?? {},
    countIndex: jobItem?.countIndex ?? 0,
    mediaRefs: [],
  };
}
