/**
 * The manifest and report of a run, rebuilt from the journal (the source of
 * truth; rows: src/outputs/manifest-rows.ts) and `report.html` with costs,
 * trainings and the timeline. Used at the end of every run (even a stopped
 * one) and by `ibatch report`.
 */
import { type EventRecord, type Journal, RUN_STATUS, serviceOfRun } from '../journal/index.js';
import {
  type DescribedItems,
  describedOrRetiredOnDisk,
  folderRowSource,
  keptRows,
  ManifestWriter,
  type ReportData,
  ReportWriter,
  reportFileOf,
} from '../outputs/index.js';
import type { Logger } from '../shared/index.js';
import { TRAINING_STEP } from './decide/item-identity.js';

/**
 * Rewrites manifest.jsonl/csv of `outputDir` (the rows of every run of the
 * job that wrote there: see folderRowSource) and the run's report.html (its
 * own rows only, and its spend as the journal sums it, which is what
 * `status` shows). `status` overrides the journal's (the engine writes the
 * outputs before it commits the final status, so a kill in between leaves the
 * run resumable). Rows are read from the journal a page at a time and the
 * files written as they come, never all in memory. Returns the
 * number of the run's own rows and the report's path (`reportFileOf`: a job
 * sharing the folder with an earlier one has its own). All of it is one read of the journal: the
 * rows and the report see the same state even while a
 * `run` in another process commits.
 *
 * `described`: the items the job file describes now (a `run`'s job, or the
 * job file a command was given), which decides the retired rows. Without it
 * (`report RUN_ID`) the items the manifest on disk says were removed from
 * the job stay retired, and no other is.
 */
export function writeRunOutputs(
  journal: Journal,
  runId: string,
  outputDir: string,
  options: {
    readonly status?: string;
    readonly described?: DescribedItems;
    /** Told of a wait for another process's change of the manifest. */
    readonly logger?: Logger;
  } = {},
): RunOutputs {
  return journal.snapshot(() => writeFromJournal(journal, runId, outputDir, options));
}

/** What `writeRunOutputs` wrote: the run's own rows, and its report's path. */
export interface RunOutputs {
  readonly rows: number;
  readonly report: string;
}

function writeFromJournal(
  journal: Journal,
  runId: string,
  outputDir: string,
  options: {
    readonly status?: string;
    readonly described?: DescribedItems;
    readonly logger?: Logger;
  },
): RunOutputs {
  const { status, described } = options;
  const run = journal.getRun(runId);
  if (!run) throw new Error(`run ${runId} is not in the journal ${journal.path}`);
  const judged = describedOrRetiredOnDisk(outputDir, described, run.jobName);
  const data = reportDataFromJournal(journal, runId, status);
  let report: ReportWriter | undefined;
  let own = 0;
  ManifestWriter.replace(
    outputDir,
    (onDisk) => {
      // The job's rows of runs the journal knows are rebuilt; the rest on
      // disk (other jobs' in a shared folder, runs of a lost journal) is kept.
      const kept = keptRows(journal, run.jobName, onDisk);
      report = new ReportWriter(
        outputDir,
        data,
        reportFileOf(run.jobName, kept.before.length === 0),
      );
      return {
        before: kept.before,
        own: folderRowSource(journal, run, outputDir, kept.ownUnknown),
        after: kept.after,
      };
    },
    {
      onRow: (row) => {
        if (row.runId !== runId) return;
        own += 1;
        report?.addChecked(row);
      },
      described: judged,
      logger: options.logger,
    },
  );
  // `replace` calls the rows callback (which names the report) before any row.
  return { rows: own, report: (report ?? new ReportWriter(outputDir, data)).finish() };
}

/** What the report says besides its rows (which `ReportWriter.add` takes one by one). */
function reportDataFromJournal(journal: Journal, runId: string, status?: string): ReportData {
  const run = journal.getRun(runId);
  if (!run) throw new Error(`run ${runId} is not in the journal ${journal.path}`);
  // Each step as its first item says, in the order of first items (one query a step).
  const steps = journal.progressByStep(runId).flatMap(({ stepId }) => {
    const [first] = journal.listItems(runId, { stepId, limit: 1 });
    if (!first || first.kind === 'training') return [];
    const kind = first.kind === 'video' ? ('video' as const) : ('image' as const);
    return [{ id: stepId, modelId: first.modelId ?? '', kind }];
  });
  const trainings = journal.listItems(runId, { stepId: TRAINING_STEP }).map((i) => ({
    id: i.itemKey.replace(/^train-/, ''),
    name: i.label,
    status: i.state,
    creditsCost: i.chargedCredits,
    refunded: i.refundedCredits > 0,
    ...(i.error ? { error: i.error } : {}),
    // A training attempt records the influencerId of the 202 as its task id.
    ...influencerIdOf(journal, runId, i.itemKey),
  }));
  const { charged, refunded, net } = journal.spendSummary(runId);
  // What `status` and the budget count: every run of the job on this run's service.
  const standing = journal.budgetStanding(
    { name: run.jobName, budget: run.budget },
    serviceOfRun(run),
  );
  // The engine writes the outputs of a finishing run just before it records
  // its final status (and finish time): the report shows that moment.
  const finishedAt =
    run.finishedAt ?? (status && status !== RUN_STATUS.running ? Date.now() : null);
  return {
    spend: { charged, refunded, net },
    jobSpend: {
      charged: standing.charged,
      refunded: standing.refunded,
      net: standing.net,
      remaining: standing.remaining,
    },
    run: {
      runId,
      jobName: run.jobName,
      startedAt: new Date(run.createdAt).toISOString(),
      ...(finishedAt ? { finishedAt: new Date(finishedAt).toISOString() } : {}),
      status: status ?? run.status,
      budget: run.budget,
      tags: run.tags,
    },
    steps,
    rows: [],
    trainings,
    events: journal.listEvents(runId, { limit: 5000 }).map(toReportEvent),
  };
}

function toReportEvent(event: EventRecord) {
  const level = /failed|blocked|error|stopped/.test(event.type)
    ? ('error' as const)
    : /drift|retry|pause|skipped/.test(event.type)
      ? ('warn' as const)
      : ('info' as const);
  return { at: new Date(event.at).toISOString(), message: event.message, level };
}

function influencerIdOf(journal: Journal, runId: string, itemKey: string) {
  const influencerId = journal
    .listAttempts(runId, itemKey)
    .findLast((a) => a.influencerId)?.influencerId;
  return influencerId ? { influencerId } : {};
}
