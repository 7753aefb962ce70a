/**
 * What resuming the job's unfinished run changes in it (`decideRun`'s
 * resume part, next-run.ts): read only, carried out by select-run.ts.
 */
import {
  type ItemHistoryRow,
  type ItemRecord,
  isStateIn,
  type NewItem,
  type RunItemHash,
  type RunRecord,
  TERMINAL_ITEM_STATES,
} from '../../journal/index.js';
import { TRAINING_STEP } from './item-identity.js';
import { changedFields, toNewItem } from './item-records.js';
import type { DecideOptions, DecisionItem } from './next-run.js';
import type { JournalReader } from './run-history.js';
import { jobItemsOf, wholeItem } from './whole-items.js';

/** What resuming the job's unfinished run changes in it (see `decideRun`). */
export interface ResumePlan {
  readonly run: RunRecord;
  /** Changed items nothing is in flight for: they take the job file's request. */
  readonly replace: readonly NewItem[];
  /** Items no longer in the job file never attempted: dropped from the run. */
  readonly drop: readonly ItemRecord[];
  /** Items no longer in the job file, attempted, idle and not finished: skipped. */
  readonly skip: readonly ItemRecord[];
  /** Changed items already paid for: finished as sent, then made by a follow-up run. */
  readonly deferred: number;
  /** What changed in the job file since the run started, by step and field (for the log). */
  readonly changes: readonly string[];
}

/**
 * What resuming `run` changes: its unchanged items carry on with their keys;
 * items the job now describes differently take the new request when nothing
 * is in flight for them (nothing was paid), else their paid attempt is
 * finished as it was sent and a follow-up run makes them as the job now says;
 * items no longer in the job are dropped when never attempted.
 */
export function resumePlan<T extends DecisionItem>(
  journal: JournalReader,
  items: readonly T[],
  run: RunRecord,
  options: DecideOptions<T>,
  /** The job's latest record of each generation item (`scopedLatest`), read by the decision. */
  latest: ReadonlyMap<string, ItemHistoryRow>,
): ResumePlan {
  const byKey = new Map(items.map((item) => [item.key, item]));
  // Only the records that change something are read whole (changed items,
  // items the job file no longer describes): the others are compared by
  // their request hash alone, so a resume of a 100,000-item run reads no
  // request, label or money of the items it carries on with.
  const kept: ItemRecord[] = [];
  journal.snapshot(() => {
    const differing: string[] = [];
    eachRunItem(journal, run.runId, latest, ({ itemKey, stepId, requestHash }) => {
      if (stepId === TRAINING_STEP) return;
      const item = byKey.get(itemKey);
      if (!item || options.identity(item) !== requestHash) differing.push(itemKey);
    });
    for (const itemKey of inJobOrder(differing, items)) {
      const record = journal.getItem(run.runId, itemKey);
      if (record) kept.push(record);
    }
  });
  // Only the changed items are needed whole (their new request, what changed).
  const changed = new Set(kept.filter((r) => byKey.has(r.itemKey)).map((r) => r.itemKey));
  const whole = jobItemsOf(changed, options);
  const replace: NewItem[] = [];
  const drop: ItemRecord[] = [];
  const skip: ItemRecord[] = [];
  const changes: string[] = [];
  let deferred = 0;
  for (const record of kept) {
    const lean = byKey.get(record.itemKey);
    const terminal = isStateIn(TERMINAL_ITEM_STATES, record.state);
    const inFlight = () => journal.getOpenAttempt(run.runId, record.itemKey) !== undefined;
    if (!lean) {
      if (record.attemptsUsed === 0) {
        drop.push(record);
        changes.push(`${record.stepId}/${record.label}: removed from the job file`);
      } else if (!terminal && !inFlight()) skip.push(record);
      continue;
    }
    const item = wholeItem(whole, record.itemKey);
    const next = toNewItem(item, options.identity(lean));
    const fields = changedFields(record.request, item.request, record.modelId, item.modelId);
    changes.push(`${record.stepId}/${record.label}: ${fields.join(', ')} changed`);
    if (!terminal && !inFlight()) replace.push(next);
    else deferred += 1;
  }
  return { run, replace, drop, skip, deferred, changes };
}

/**
 * `keys` in the job file's order, then those it no longer describes by key:
 * the plan's changes list alike however the run's items were visited
 * (`eachRunItem`: the latest records keep no order within a run).
 */
function inJobOrder(keys: readonly string[], items: readonly DecisionItem[]): string[] {
  if (keys.length < 2) return [...keys];
  const wanted = new Set(keys);
  const inJob = items.filter((item) => wanted.has(item.key)).map((item) => item.key);
  const listed = new Set(inJob);
  return [...inJob, ...keys.filter((key) => !listed.has(key)).sort()];
}

/**
 * Each item of run `runId` with its step and request hash. When the job's
 * latest records hold every generation item of the run (no later run on the
 * service recorded one of its keys: the usual resume), they are those items'
 * rows, read already; otherwise the run's rows are read (`eachRunItemHash`).
 * Trainings are not among the latest records: they are not counted.
 */
function eachRunItem(
  journal: Pick<JournalReader, 'progressByStep' | 'eachRunItemHash'>,
  runId: string,
  latest: ReadonlyMap<string, ItemHistoryRow>,
  visit: (item: RunItemHash) => void,
): void {
  let generationItems = 0;
  for (const step of journal.progressByStep(runId))
    if (step.stepId !== TRAINING_STEP) generationItems += step.total;
  let ofRun = 0;
  for (const row of latest.values()) if (row.runId === runId) ofRun += 1;
  if (ofRun !== generationItems) {
    journal.eachRunItemHash(runId, visit);
    return;
  }
  for (const row of latest.values()) if (row.runId === runId) visit(row);
}
