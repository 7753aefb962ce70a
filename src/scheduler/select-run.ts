/**
 * Which run `ibatch run` works on, and what it makes. The job file is the
 * desired state (src/plan/desired-state.ts): the unfinished run of the job is
 * resumed (its idempotency keys are the ones in flight) and given whatever
 * else is missing; otherwise a new run is started only when something is
 * missing; a finished, unchanged job starts nothing.
 */
import type { JobItem, LoadedJob } from '../job/index.js';
import {
  FINISHED_RUN_STATUSES,
  ITEM_STATE,
  isStateIn,
  type Journal,
  type NewItem,
  newRunId,
  RUN_STATUS,
  type RunRecord,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import { type DesiredState, desiredState, inScope, VERDICTS_TO_MAKE } from '../plan/index.js';
import { UsageError } from '../shared/index.js';
import { TRAINING_STEP } from './item-identity.js';

/** What identifies the service and account a run spends on. */
export interface RunScope {
  readonly service: string;
  /** service + account fingerprint (never the key). */
  readonly scope: string;
}

export interface SelectOptions {
  readonly runId?: string;
  /** `--fresh`: steps whose done items are made again; `true` for all. */
  readonly fresh?: ReadonlySet<string> | true;
  /** Runs this invocation already finished (their failures wait for the next one). */
  readonly settledRuns: ReadonlySet<string>;
  readonly snapshot: RunScope & Record<string, unknown>;
  /** An item's identity hash (src/scheduler/item-identity.ts). */
  readonly identity: (item: JobItem) => string;
  /** The trainings a new or resumed run needs as journal items. */
  readonly trainings: (makes: readonly JobItem[]) => readonly NewItem[];
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

export function selectRun(
  journal: Journal,
  job: LoadedJob,
  items: readonly JobItem[],
  options: SelectOptions,
): RunSelection {
  const { scope, service } = options.snapshot;
  const history = journal
    .itemHistory(job.name)
    .filter((row) => row.stepId !== TRAINING_STEP && inScope(row, scope, service));
  const open = openRunOf(journal, job, options);
  const wanted = items.map((item) => ({ ...item, requestHash: options.identity(item) }));
  const state = desiredState(history, wanted, {
    ...(open ? { openRunId: open.runId } : {}),
    ...(options.fresh ? { fresh: options.fresh } : {}),
    settledRuns: options.settledRuns,
    outputIds: (runId, itemKey) =>
      journal
        .listOutputs(runId)
        .filter((o) => o.itemKey === itemKey)
        .sort((a, b) => a.n - b.n)
        .map((o) => o.generationId ?? ''),
  });
  const makes = items.filter((item) => {
    const verdict = state.verdicts.get(item.key) ?? 'new';
    if (!VERDICTS_TO_MAKE.includes(verdict)) return false;
    return !(open && state.latest.get(item.key)?.runId === open.runId);
  });
  if (open) return resume(journal, job, items, open, state, makes, options);
  const trainings = options.trainings(makes);
  if (makes.length === 0 && trainings.length === 0) {
    const [lastRun] = journal.listRuns(job.name, 1);
    return { kind: 'nothing', state, ...(lastRun ? { lastRun } : {}) };
  }
  const run = journal.createRun({
    runId: newRunIdFor(journal, options.runId),
    jobName: job.name,
    jobPath: job.file,
    jobHash: job.textHash,
    budget: job.budget ?? null,
    options: options.snapshot,
  });
  journal.addItems(run.runId, [
    ...trainings,
    ...makes.map((item) => toNewItem(item, options.identity(item))),
  ]);
  return { kind: 'run', run, resumed: false, state, deferred: 0, changes: [] };
}

/** The run a `run` resumes: `--run-id`'s when unfinished, else the job's newest run when unfinished. */
function openRunOf(
  journal: Journal,
  job: LoadedJob,
  options: SelectOptions,
): RunRecord | undefined {
  if (options.runId !== undefined) {
    const named = journal.getRun(options.runId);
    if (named && named.jobName !== job.name) {
      throw new UsageError(
        `run ${options.runId} belongs to job "${named.jobName}", not "${job.name}"`,
      );
    }
    // The newest of X, X.2, X.3...: a stopped X.2 is resumed, never left behind.
    const newest = runIdFamily(journal, options.runId).at(-1);
    return newest && !FINISHED_RUN_STATUSES.includes(newest.status) ? newest : undefined;
  }
  // Only the job's newest run on this service and account is resumed: another
  // service's ids mean nothing here (an in-process emulator is a new service
  // at every start), and an older unfinished run was left behind on purpose.
  // `--fresh` resumes it too (what it paid for is finished, not paid again)
  // and adds the fresh items to it.
  const newest = journal.listRuns(job.name, 50).find((run) => sameScope(run, options.snapshot));
  return newest && !FINISHED_RUN_STATUSES.includes(newest.status) ? newest : undefined;
}

const optionOf = (run: RunRecord, name: string): unknown =>
  (run.options as Record<string, unknown> | null)?.[name];
/** Runs of an older ibatch recorded the service only. */
const sameScope = (run: RunRecord, target: RunScope): boolean =>
  optionOf(run, 'scope') === undefined
    ? optionOf(run, 'service') === target.service
    : optionOf(run, 'scope') === target.scope;

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

/** The runs named X, X.2, X.3... (in that order, up to the first missing one). */
function runIdFamily(journal: Journal, runId: string): RunRecord[] {
  const family: RunRecord[] = [];
  for (let n = 1; ; n += 1) {
    const run = journal.getRun(n === 1 ? runId : `${runId}.${n}`);
    if (!run) return family;
    family.push(run);
  }
}

/**
 * Resumes `run`: its unchanged items carry on with their keys; items the job
 * now describes differently take the new request when nothing is in flight
 * for them (nothing was paid), else their paid attempt is finished as it was
 * sent and a follow-up run makes them as the job now says; items no longer in
 * the job are dropped when never attempted; whatever else is missing is added.
 */
function resume(
  journal: Journal,
  job: LoadedJob,
  items: readonly JobItem[],
  run: RunRecord,
  state: DesiredState,
  makes: readonly JobItem[],
  options: SelectOptions,
): RunSelection {
  const { runId } = run;
  if ((run.budget ?? null) !== (job.budget ?? null))
    journal.setRunBudget(runId, job.budget ?? null);
  const byKey = new Map(items.map((item) => [item.key, item]));
  const changes: string[] = [];
  let deferred = 0;
  for (const record of journal.listItems(runId)) {
    if (record.stepId === TRAINING_STEP) continue;
    const item = byKey.get(record.itemKey);
    const terminal = isStateIn(TERMINAL_ITEM_STATES, record.state);
    if (!item) {
      if (journal.removeUnattemptedItem(runId, record.itemKey)) {
        changes.push(`${record.stepId}/${record.label}: removed from the job file`);
      } else if (!terminal && !journal.getOpenAttempt(runId, record.itemKey)) {
        journal.setItemState(runId, record.itemKey, {
          state: ITEM_STATE.skipped,
          error: 'removed from the job file',
        });
      }
      continue;
    }
    const next = toNewItem(item, options.identity(item));
    if (next.requestHash === record.requestHash) continue;
    const fields = changedFields(record.request, item.request, record.modelId, item.modelId);
    changes.push(`${record.stepId}/${record.label}: ${fields.join(', ')} changed`);
    if (!terminal && journal.replaceItemRequest(runId, next)) continue;
    deferred += 1;
  }
  journal.addItems(runId, [
    ...options.trainings(makes),
    ...makes.map((item) => toNewItem(item, options.identity(item))),
  ]);
  return {
    kind: 'run',
    run: journal.getRun(runId) ?? run,
    resumed: true,
    state,
    deferred,
    changes,
  };
}

/** The request fields that differ, as the job file names them (`input.prompt`, `copies`, `model`). */
export function changedFields(
  before: unknown,
  after: unknown,
  modelBefore: string | null,
  modelAfter: string,
): string[] {
  const fields: string[] = [];
  if (modelBefore !== modelAfter) fields.push('model');
  const flat = (value: unknown, prefix: string, into: Map<string, string>) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) flat(v, prefix ? `${prefix}.${k}` : k, into);
    } else into.set(prefix, JSON.stringify(value));
    return into;
  };
  const a = flat(before, '', new Map());
  const b = flat(after, '', new Map());
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(name) !== b.get(name)) fields.push(name);
  }
  return fields.length > 0 ? fields : ['request'];
}

export function markRunning(journal: Journal, runId: string): void {
  journal.setRunStatus(runId, RUN_STATUS.running);
}

/** A job item as the journal stores it; `identity` is its identity hash. */
export function toNewItem(item: JobItem, identity: string): NewItem {
  return {
    itemKey: item.key,
    stepId: item.stepId,
    label: item.label,
    modelId: item.modelId,
    kind: item.kind,
    request: item.request,
    requestHash: identity,
    expectedOutputs: item.expectedOutputs,
    sourceItemKey: item.source?.itemKey ?? null,
  };
}
