/**
 * Which run `ibatch run` works on: the one named by `--run-id`, else the
 * newest unfinished run of the job (resume), else a new one. A resume is
 * refused when the job file changed in a way that alters items still to do.
 */
import type { JobItem, LoadedJob } from '../job/index.js';
import {
  FINISHED_RUN_STATUSES,
  isStateIn,
  type Journal,
  type NewItem,
  newRunId,
  RUN_STATUS,
  type RunRecord,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import { contentHash, EXIT, IbatchError, UsageError } from '../shared/index.js';

export class RunChangedError extends IbatchError {
  constructor(message: string) {
    super('run_changed', message, EXIT.invalid);
  }
}

export interface RunSelection {
  readonly run: RunRecord;
  readonly resumed: boolean;
  /** `--run-id` of a run that already finished: nothing to do. */
  readonly alreadyFinished: boolean;
}

export function selectRun(
  journal: Journal,
  job: LoadedJob,
  options: { runId?: string; newRun?: boolean; snapshot: Record<string, unknown> },
): RunSelection {
  const create = (runId: string): RunSelection => ({
    run: journal.createRun({
      runId,
      jobName: job.name,
      jobPath: job.file,
      jobHash: job.textHash,
      budget: job.budget ?? null,
      options: options.snapshot,
    }),
    resumed: false,
    alreadyFinished: false,
  });
  if (options.runId) {
    const existing = journal.getRun(options.runId);
    if (!existing) return create(options.runId);
    if (existing.jobName !== job.name) {
      throw new UsageError(
        `run ${options.runId} belongs to job "${existing.jobName}", not "${job.name}"`,
      );
    }
    if (FINISHED_RUN_STATUSES.includes(existing.status)) {
      return { run: existing, resumed: false, alreadyFinished: true };
    }
    return resume(journal, job, existing);
  }
  if (!options.newRun) {
    // Only a run against the same service is resumed: its ids mean nothing
    // elsewhere (an in-process emulator is a new service at every start).
    const unfinished = journal.findUnfinishedRun(job.name);
    if (unfinished && serviceOf(unfinished) === options.snapshot.service) {
      return resume(journal, job, unfinished);
    }
  }
  return create(newRunId());
}

function serviceOf(run: RunRecord): unknown {
  return (run.options as { service?: unknown } | null)?.service;
}

/**
 * Resumes `run`. Its status stays what it was until the items are seeded
 * (`markRunning`): a resume refused because the job changed ran nothing and
 * must leave the run as it found it.
 */
function resume(journal: Journal, job: LoadedJob, run: RunRecord): RunSelection {
  if ((run.budget ?? null) !== (job.budget ?? null))
    journal.setRunBudget(run.runId, job.budget ?? null);
  return { run: journal.getRun(run.runId) ?? run, resumed: true, alreadyFinished: false };
}

export function markRunning(journal: Journal, runId: string): void {
  journal.setRunStatus(runId, RUN_STATUS.running);
}

export function toNewItem(item: JobItem): NewItem {
  return {
    itemKey: item.key,
    stepId: item.stepId,
    label: item.label,
    modelId: item.modelId,
    kind: item.kind,
    request: item.request,
    requestHash: contentHash(item.request),
    expectedOutputs: item.expectedOutputs,
    sourceItemKey: item.source?.itemKey ?? null,
  };
}

/**
 * Adds the job's items to the run. On a resume, items still to do must be
 * exactly what the job file describes now; otherwise the user chooses.
 */
export function seedItems(
  journal: Journal,
  runId: string,
  items: readonly NewItem[],
  resumed: boolean,
): void {
  const { changed } = journal.addItems(runId, items);
  if (!resumed) return;
  const wanted = new Set(items.map((i) => i.itemKey));
  const open = journal.listItems(runId).filter((i) => !isStateIn(TERMINAL_ITEM_STATES, i.state));
  const altered = open.filter((i) => changed.includes(i.itemKey)).map((i) => i.itemKey);
  const removed = open.filter((i) => !wanted.has(i.itemKey)).map((i) => i.itemKey);
  if (altered.length === 0 && removed.length === 0) return;
  const sample = [...altered, ...removed].slice(0, 5).join(', ');
  throw new RunChangedError(
    `the job file changed since run ${runId} started: ${altered.length} unfinished item(s) changed and ${removed.length} removed (${sample}). ` +
      'Restore the file to resume, or run with --new to start a new run.',
  );
}
