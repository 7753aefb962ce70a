/**
 * A `run` with nothing to make: the job file describes nothing the journal
 * does not show done. No run is started; the files of done items are
 * checked (a missing or edited one is downloaded again while its URL serves
 * it) and the manifest and report are rewritten.
 */
import { RUN_STATUS } from '../journal/index.js';
import { ManifestWriter } from '../outputs/index.js';
import { EXIT } from '../shared/index.js';
import type { RunSelection } from './decide/select-run.js';
import { DownloadStage } from './downloads.js';
import { outputsOfDoneItems } from './drive-run.js';
import type { Invocation } from './run-job.js';
import { writeRunOutputs } from './run-outputs.js';
import { timelineRecorder } from './run-wiring.js';
import { StopController } from './stop-control.js';
import { RUN_DEFAULTS, type RunResult } from './types.js';

/** The job file describes nothing the journal does not show done: nothing is created. */
export async function nothingToDo(
  inv: Invocation,
  selection: Extract<RunSelection, { kind: 'nothing' }>,
  outputDir: string,
): Promise<RunResult> {
  const { journal, validated } = inv;
  const lastRun = selection.lastRun;
  const repair = lastRun ? await repairDoneFiles(inv, selection, outputDir, lastRun.runId) : null;
  const written = lastRun
    ? writeRunOutputs(journal, lastRun.runId, outputDir, {
        described: selection.state.verdicts,
        logger: inv.logger,
      })
    : undefined;
  const done = [...selection.state.verdicts.values()].filter((v) => v === 'done').length;
  const removed = selection.state.removed.length;
  const message = [
    `nothing to do: ${done} of ${validated.items.items.length} item(s) are done` +
      (lastRun ? ` (run ${lastRun.runId} already finished)` : ''),
    removed > 0 ? `${removed} item(s) no longer in the job file are left as they are` : '',
    repair?.repaired ? `${repair.repaired} missing or edited file(s) downloaded again` : '',
    repair?.lost
      ? `${repair.lost} file(s) are missing and their URL no longer serves them: \`run --fresh STEP\` makes them again`
      : '',
  ]
    .filter((part) => part !== '')
    .join('; ');
  inv.logger.info({ event: 'run.nothing_to_do', done, removed, ...repair }, message);
  return {
    runId: lastRun?.runId ?? '',
    status: lastRun?.status ?? RUN_STATUS.completed,
    exitCode: EXIT.ok,
    message,
    spend: { charged: 0, refunded: 0, net: 0, reserved: 0, committed: 0 },
    budget: validated.job.budget ?? null,
    counts: { succeeded: 0, failed: 0, blocked: 0, skipped: 0, pending: 0 },
    done,
    outputDir,
    alreadyFinished: true,
    ...(written ? { report: written.report } : {}),
  };
}

/** Checks the done items' files; events go to the job's last run. */
async function repairDoneFiles(
  inv: Invocation,
  selection: Extract<RunSelection, { kind: 'nothing' }>,
  outputDir: string,
  runId: string,
) {
  const { journal, validated, options, logger } = inv;
  const pages = outputsOfDoneItems(journal, selection.state);
  const first = pages.next();
  if (first.done) return { repaired: 0, lost: 0 };
  const outputs = (function* () {
    yield first.value;
    yield* pages;
  })();
  const manifest = ManifestWriter.open(outputDir, logger);
  try {
    const stage = new DownloadStage(
      {
        runId,
        journal,
        job: validated.job,
        outputDir,
        protectedPaths: inv.protectedPaths,
        stop: new StopController(),
        emit: (event) => options.onEvent?.(event),
        record: timelineRecorder(journal, runId, logger),
      },
      manifest,
      validated.items.jobItems,
      new Map(validated.job.steps.map((step) => [step.id, step])),
      options.downloadConcurrency ?? RUN_DEFAULTS.downloadConcurrency,
    );
    const result = await stage.verifyAndRepair(outputs);
    await stage.drain();
    return result;
  } finally {
    manifest.close();
  }
}
