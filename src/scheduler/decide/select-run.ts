/**
 * Which run `ibatch run` works on, and what it makes: carries out the
 * read-only decision of next-run.ts (the one rule `plan` quotes too). The
 * unfinished run of the job is resumed and given whatever else is missing;
 * otherwise a new run is started only when something is missing; a finished,
 * unchanged job starts nothing.
 */
import type { JobItem, LoadedJob } from '../../job/index.js';
import {
  ITEM_STATE,
  type Journal,
  type NewItem,
  newRunId,
  RUN_STATUS,
  type RunRecord,
} from '../../journal/index.js';
import type { DesiredState } from '../../plan/index.js';
import { toNewItem } from './item-records.js';
import { type DecideOptions, decideRun, type RunDecision } from './next-run.js';
import type { PlanItem, PlanItems } from './plan-items.js';
import { newestRunOnService, type RunScope, runIdFamily } from './run-history.js';

/**
 * What `decideRun` takes, with the run's options snapshot in place of its
 * scope; the items' identity and whole items are the lean records' own.
 */
export interface SelectOptions
  extends Omit<
    DecideOptions<PlanItem>,
    keyof RunScope | 'settledRuns' | 'jobItems' | 'identity' | 'held'
  > {
  /** Runs this invocation already finished (their failures wait for the next one). */
  readonly settledRuns: ReadonlySet<string>;
  /** The run's recorded options; its service and scope are the decision's. */
  readonly snapshot: RunScope & Record<string, unknown>;
}

export type RunSelection =
  | {
      readonly kind: 'run';
      readonly run: RunRecord;
      readonly resumed: boolean;
      readonly state: DesiredState;
      /** Items of a resumed run that changed after their attempt was sent: made by a follow-up run. */
      readonly deferred: number;
      /** What changed in the job file since the resumed run started (for the log). */
      readonly changes: readonly string[];
    }
  | { readonly kind: 'nothing'; readonly state: DesiredState; readonly lastRun?: RunRecord };

/**
 * In the run chain (docs/glossary.md): the next run (`decideRun`, next-run.ts)
 * carried out in the journal: the resumed run with its changed items
 * written, or a new run recorded with its items, or nothing. Its own
 * function, and in decide/, because it is the one place the engine writes
 * the decision `plan` only reads; in `converge` the rule and the engine's
 * state (folders, spend caps) would mix, and decide/ could not test it alone.
 */
export function selectRun(
  journal: Journal,
  job: LoadedJob,
  items: PlanItems,
  options: SelectOptions,
): RunSelection {
  const { snapshot, ...decide } = options;
  const { scope, service } = snapshot;
  const decision = decideRun(journal, job, items.items, {
    ...decide,
    scope,
    service,
    identity: items.identity,
    jobItems: items.jobItems,
    held: items.held,
  });
  const { state, makes, trainings } = decision;
  if (decision.resume) return resume(journal, job, items, decision);
  if (makes.length === 0 && trainings.length === 0) {
    // The run whose files and manifest a run with nothing to make checks and rewrites.
    const lastRun = newestRunOnService(journal, job.name, service);
    return { kind: 'nothing', state, ...(lastRun ? { lastRun } : {}) };
  }
  const run = journal.createRun({
    runId: newRunIdFor(journal, options.runId),
    jobName: job.name,
    jobPath: job.file,
    jobHash: job.textHash,
    budget: job.budget ?? null,
    options: options.snapshot,
    tags: job.tags,
  });
  journal.addItems(run.runId, trainings);
  addMade(journal, run.runId, items, makes);
  return { kind: 'run', run, resumed: false, state, deferred: 0, changes: [] };
}

/** Items recorded per journal transaction: a 100,000-item run is never held whole. */
const RECORD_BATCH = 1000;

/**
 * Records the items a run makes, each with its request as it is sent (a
 * rejected item's remade one) and the identity of the job file's item, so a
 * remade item is done once made. The lean ones are expanded from the job
 * again and written a batch at a time; a kill between batches leaves a run
 * its resume completes (what it lacks is still to be made).
 */
function addMade(
  journal: Journal,
  runId: string,
  items: PlanItems,
  makes: readonly (PlanItem | JobItem)[],
): void {
  const keys = new Set<string>();
  const remade = new Map<string, JobItem>();
  for (const item of makes) {
    keys.add(item.key);
    if ('request' in item) remade.set(item.key, item);
  }
  const batch: NewItem[] = [];
  items.eachOf(keys, (item, record) => {
    if (!record) throw new Error(`the job file's item ${item.key} changed while it was read`);
    // A remade item carries the identity of the job file's item.
    batch.push(toNewItem(remade.get(item.key) ?? item, items.identity(record)));
    if (batch.length >= RECORD_BATCH) journal.addItems(runId, batch.splice(0));
  });
  if (batch.length > 0) journal.addItems(runId, batch);
}

/**
 * `--run-id X` names the keys of what is still missing. When run X already
 * finished and the job now wants more, the new run is X.2 (then X.3...): a
 * retried CI job computes the same name, so its keys are the same too.
 */
function newRunIdFor(journal: Journal, runId: string | undefined): string {
  if (runId === undefined) return newRunId();
  const family = runIdFamily(journal, runId);
  return family.length === 0 ? runId : `${runId}.${family.length + 1}`;
}

/** Resumes the decided run: applies its resume plan, then adds whatever else is missing. */
function resume(
  journal: Journal,
  job: LoadedJob,
  items: PlanItems,
  decision: RunDecision<PlanItem>,
): RunSelection {
  const plan = decision.resume;
  if (!plan) throw new Error('resume without a run to resume');
  const { runId } = plan.run;
  if ((plan.run.budget ?? null) !== (job.budget ?? null))
    journal.setRunBudget(runId, job.budget ?? null);
  // Spend is counted under the tags of the run that committed it, as last driven.
  if (!sameTags(plan.run.tags, job.tags)) journal.setRunTags(runId, job.tags);
  let deferred = plan.deferred;
  for (const record of plan.drop) journal.removeUnattemptedItem(runId, record.itemKey);
  for (const record of plan.skip) {
    journal.setItemState(runId, record.itemKey, {
      state: ITEM_STATE.skipped,
      error: 'removed from the job file',
    });
  }
  // The job holds the lock, so nothing was sent since the decision; a refusal
  // (an attempt opened after all) still finishes as sent and is made later.
  for (const next of plan.replace) if (!journal.replaceItemRequest(runId, next)) deferred += 1;
  journal.addItems(runId, decision.trainings);
  addMade(journal, runId, items, decision.makes);
  return {
    kind: 'run',
    run: journal.getRun(runId) ?? plan.run,
    resumed: true,
    state: decision.state,
    deferred,
    changes: plan.changes,
  };
}

function sameTags(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>) {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

export function markRunning(journal: Journal, runId: string): void {
  journal.setRunStatus(runId, RUN_STATUS.running);
}
