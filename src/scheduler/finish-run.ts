/**
 * How a run ends: its status in the journal, the exit code of the interface,
 * one message saying what to do next, and the manifest and report rewritten
 * from the journal.
 */
import type { ServiceClient } from '../api/index.js';
import {
  ATTEMPT_STATE,
  isStateIn,
  type Journal,
  RUN_STATUS,
  type RunStatus,
  type StepProgress,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import type { RateGate } from '../limits/index.js';
import { type DescribedItems, diskFullCode, OutputDiskFullError } from '../outputs/index.js';
import { EXIT, type ExitCode, type Logger } from '../shared/index.js';
import type { RunContext } from './context.js';
import { TRAINING_STEP } from './decide/item-identity.js';
import { writeRunOutputs } from './run-outputs.js';
import {
  exitCodeOf,
  RESUME_AFTER_INTERRUPT,
  runStatusOf,
  runStatusOfError,
  type StopController,
} from './stop-control.js';
import type { ProgressSnapshot, RunResult } from './types.js';

export interface FinishInput {
  readonly journal: Journal;
  readonly runId: string;
  readonly outputDir: string;
  readonly stop: StopController;
  readonly client: ServiceClient;
  readonly downloadFailures: number;
  /** The items the job file describes (which outputs are retired). */
  readonly described: DescribedItems;
  /** The first output the local folder refused: the run ends asking for the fix (exit 2). */
  readonly localProblem?: string | undefined;
  readonly logger: Logger;
}

export async function finishRun(input: FinishInput): Promise<RunResult> {
  const { journal, runId, stop } = input;
  const counts = countItems(journal, runId);
  let status: RunStatus;
  let exitCode: ExitCode;
  let message: string;
  if (stop.reason) {
    status = runStatusOf(stop.reason);
    exitCode = exitCodeOf(stop.reason);
    const next = stop.nextStep ?? (await nextStep(input, stop.reason));
    message = sentences(stop.message, next, inDoubt(journal, runId));
  } else if (input.localProblem !== undefined) {
    status = RUN_STATUS.stoppedError;
    exitCode = EXIT.invalid;
    message = sentences(
      input.localProblem,
      'Fix the output folder, then run again: the outputs are paid for and are downloaded without paying again',
    );
  } else if (counts.pending > 0 || input.downloadFailures > 0) {
    status = RUN_STATUS.stoppedUnreachable;
    exitCode = EXIT.unreachable;
    message = `${counts.pending} item(s) unfinished and ${input.downloadFailures} download(s) failed; run again to resume`;
  } else if (counts.failed + counts.blocked + counts.skipped > 0) {
    status = RUN_STATUS.completedWithFailures;
    exitCode = EXIT.itemsFailed;
    message = `finished: ${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.blocked} blocked, ${counts.skipped} skipped`;
  } else {
    status = RUN_STATUS.completed;
    exitCode = EXIT.ok;
    message = `finished: ${counts.succeeded} item(s) succeeded`;
  }
  // Outputs first, status last: a kill in between leaves the run unfinished,
  // so the next `run` resumes it (and rewrites the outputs) instead of
  // starting a new run next to stale files.
  let report: string | undefined;
  try {
    ({ report } = writeRunOutputs(journal, runId, input.outputDir, {
      status,
      described: input.described,
      logger: input.logger,
    }));
  } catch (error) {
    const errno = diskFullCode(error);
    if (!errno) throw error;
    // No room for the manifest or the report: a stop like a full disk during
    // a download. The journal holds everything; the resume rewrites them.
    status = RUN_STATUS.stoppedUnreachable;
    exitCode = EXIT.unreachable;
    const full = new OutputDiskFullError(input.outputDir, errno, { cause: error });
    message = sentences(full.message, OutputDiskFullError.NEXT_STEP);
  }
  journal.setRunStatus(runId, status);
  const run = journal.getRun(runId);
  return {
    runId,
    status,
    exitCode,
    message,
    spend: journal.spendSummary(runId),
    budget: run?.budget ?? null,
    counts,
    outputDir: input.outputDir,
    alreadyFinished: false,
    ...(report ? { report } : {}),
  };
}

/**
 * An error escaped the run (a refused key at the first request, a full disk,
 * a bug) instead of stopping it through the StopController: the run must not
 * stay `running`, so `status` shows what stopped it. A failure to
 * record that is logged, never allowed to hide the error itself.
 */
export function recordEscapedStop(
  journal: Journal,
  runId: string,
  error: unknown,
  logger: Logger,
): void {
  try {
    if (journal.getRun(runId)?.status === RUN_STATUS.running) {
      journal.setRunStatus(runId, runStatusOfError(error));
    }
  } catch (recordError) {
    logger.error({ err: String(recordError) }, 'could not record why the run stopped');
  }
}

async function nextStep(
  input: FinishInput,
  reason: NonNullable<StopController['reason']>,
): Promise<string> {
  switch (reason) {
    case 'credits': {
      const account = await input.client.getAccount().catch(() => undefined);
      const balance = account ? `Balance: ${account.credits} credits.` : '';
      switch (input.stop.creditsCap) {
        case 'budget':
          return `${balance} Raise the job's \`budget\` (it caps the job's spend over all its runs), then run again to continue`;
        case 'max-spend':
          return `${balance} Run again to continue (each run may commit up to its --max-spend)`;
        default:
          return account
            ? `Balance: ${account.credits} credits; top up at ${account.purchaseUrl}, then run again to resume`
            : 'The balance is too low: top up, then run again to resume';
      }
    }
    case 'unauthorized':
      return 'With a valid key in place, run again to resume';
    case 'unreachable':
      return 'Run again to resume when the service is reachable.';
    case 'interrupted':
      return RESUME_AFTER_INTERRUPT;
    case 'delivery':
      // Never a scheduler stop (delivery follows a finished run); said for completeness.
      return 'Run again, or `ibatch deliver`, to deliver what is missing.';
    default: {
      const never: never = reason;
      return String(never);
    }
  }
}

/** Creates sent whose answer was never recorded: the resume re-sends them with the same key. */
function inDoubt(journal: Journal, runId: string): string {
  const open = journal
    .listOpenAttempts(runId)
    .filter((a) => a.state === ATTEMPT_STATE.intent).length;
  return open > 0
    ? `${open} create(s) may have reached the service without an answer; the resume re-sends them with the same idempotency key, so nothing is paid twice.`
    : '';
}

/** Joins sentences into one message, each ending with one period. */
function sentences(...parts: string[]): string {
  return parts
    .map((part) => part.trim().replace(/\.+$/, ''))
    .filter((part) => part !== '')
    .map((part) => `${part}.`)
    .join(' ');
}

export function countItems(journal: Journal, runId: string): RunResult['counts'] {
  return countsOf(runProgress(journal, runId));
}

/**
 * The run's items per step and state as the progress block, the run's end
 * and `status` count them: a training this run neither started nor charged
 * (an influencer trained before, reused) is no item of this run, though the
 * journal keeps a row for it (the run's record of which influencer it used).
 */
export function runProgress(
  journal: Pick<Journal, 'progressByStep' | 'countSucceededUnattempted'>,
  runId: string,
): StepProgress[] {
  const steps = journal.progressByStep(runId);
  // Most runs have no succeeded training: they skip the count, which reads the run's rows.
  const trainingsDone = steps.find((step) => step.stepId === TRAINING_STEP)?.states.succeeded ?? 0;
  const reused = trainingsDone === 0 ? 0 : journal.countSucceededUnattempted(runId, TRAINING_STEP);
  if (reused === 0) return steps;
  return steps.flatMap((step) => {
    if (step.stepId !== TRAINING_STEP) return [step];
    const total = step.total - reused;
    const succeeded = (step.states.succeeded ?? 0) - reused;
    return total > 0 ? [{ ...step, total, states: { ...step.states, succeeded } }] : [];
  });
}

/** Items by outcome (anything not terminal is pending), from per-step progress. */
export function countsOf(steps: readonly StepProgress[]): RunResult['counts'] {
  const counts = { succeeded: 0, failed: 0, blocked: 0, skipped: 0, pending: 0 };
  for (const step of steps) {
    for (const [state, n] of Object.entries(step.states)) {
      if (isStateIn(TERMINAL_ITEM_STATES, state)) {
        counts[state] += n ?? 0;
      } else counts.pending += n ?? 0;
    }
  }
  return counts;
}

/**
 * Progress snapshots after item ends: the first at once, then at most one per
 * `gapMs`, the last of a burst trailing, so what shows is never more than
 * `gapMs` behind the journal. A snapshot reads the journal's per-step counts
 * (a few rows per step), but a burst of item ends still needs one, not one each.
 */
export function snapshotThrottle(take: () => void, gapMs = 250) {
  let lastAt = Number.NEGATIVE_INFINITY;
  let trailing: NodeJS.Timeout | undefined;
  const now = () => {
    trailing = undefined;
    lastAt = performance.now();
    take();
  };
  return {
    request(): void {
      if (trailing) return;
      const wait = lastAt + gapMs - performance.now();
      if (wait <= 0) now();
      else trailing = setTimeout(now, wait);
    },
    cancel(): void {
      clearTimeout(trailing);
      trailing = undefined;
    },
  };
}

export function progressSnapshot(ctx: RunContext, gate: RateGate): ProgressSnapshot {
  const run = ctx.journal.getRun(ctx.runId);
  const at = Date.now();
  return {
    runId: ctx.runId,
    steps: runProgress(ctx.journal, ctx.runId),
    spend: ctx.journal.spendSummary(ctx.runId),
    budget: run?.budget ?? null,
    pausedUntil: gate.pausedUntil ?? undefined,
    rateWaitUntil: rateWaitUntil(gate, at),
    inFlight: ctx.watcher.size,
    at,
  };
}

/**
 * When something waits at the gate for our own limits (no pause): the moment
 * the next slot of a full bucket frees up, what a person waits for.
 */
function rateWaitUntil(gate: RateGate, now: number): number | undefined {
  const view = gate.snapshot();
  if (view.waiting === 0 || view.pausedUntil !== null) return undefined;
  const full = Object.values(view.buckets).filter((b) => b.available <= 0 && b.nextFreeAt > now);
  if (full.length === 0) return undefined;
  return Math.min(...full.map((b) => b.nextFreeAt));
}
