/**
 * One run invocation as `connect().run` and `ibatch run` both make it: the
 * run (`runJob`), then its delivery (`deliver:`, docs/deliver.md) when it
 * finished, then the announcement of its end (`notify:`, docs/notify.md),
 * whatever ended it, an error that escaped the run included.
 */
import path from 'node:path';
import { s3EndpointOf } from '../deliver/index.js';
import { notifyUrlProblem, s3UrlProblem } from '../job/index.js';
import { type RunJobOptions, type RunResult, runJob } from '../scheduler/index.js';
import { type ExitCode, silentLogger, UsageError } from '../shared/index.js';
import { type DeliveryAfterRun, deliverAfterRun, type RunDelivery } from './deliver-job.js';
import { resumeCommand } from './resume-command.js';
import { type RunEnd, type RunNotification, RunNotifier } from './run-notifier.js';

/** What a run hands off after it ended, besides the `RunJobOptions` it runs with. */
export interface HandOffOptions {
  /**
   * Deliver the outputs and the manifest to this `s3://BUCKET/PREFIX` once
   * the run finished (`run --deliver`). The store's endpoint is read from
   * `env`, its credentials from the AWS SDK's default chains.
   * @default the job's `deliver:` (none: no delivery)
   */
  readonly deliverTo?: string;
  /**
   * More receivers of the run's end (`run --notify`), added to the job's
   * `notify:`: URLs, as the job's own entries are written.
   * @default none: only the job's `notify:`
   */
  readonly notify?: readonly string[];
  /**
   * Where the store's endpoint (`AWS_ENDPOINT_URL_S3`, `AWS_ENDPOINT_URL`)
   * and the notifications' signing secret (`IBATCH_NOTIFY_SECRET`) are read.
   * @default process.env
   */
  readonly env?: NodeJS.ProcessEnv;
  /**
   * The command that resumes the run, sent in the notification of a stop.
   * @default `ibatch run JOB` with the options that say which run and where
   * (journal, output folder, run id, max spend, offline, job limits, delivery)
   */
  readonly resumeCommand?: string;
  /**
   * Called once the run and its delivery ended (or an error escaped), before
   * the notifications go out: a summary shown here does not wait for a slow
   * receiver. @default none
   */
  readonly onEnd?: (end: RunHandOff | { readonly error: unknown }) => void;
}

/** `connect().run`'s options: `runJob`'s, without what the connection provides, and the hand-off's. */
export type ConnectionRunOptions = Omit<
  RunJobOptions,
  'jobPath' | 'client' | 'gate' | 'limits' | 'accountFingerprint'
> &
  HandOffOptions;

/** The run and its delivery: what is known before the notifications go out. */
export interface RunHandOff {
  /** The run's result, as `runJob` returns it. */
  readonly result: RunResult;
  /** Null when the run stopped (nothing is delivered) or nothing names a destination. */
  readonly delivery: RunDelivery | null;
  /**
   * The invocation's exit code (`ibatch run`'s): the run's, or 4 when its
   * delivery failed (the run itself stays as it ended).
   */
  readonly exitCode: ExitCode;
}

/** What `connect().run` resolves with. */
export interface RunOutcome extends RunHandOff {
  /** What was announced; null when no receiver was named (or sending failed: a warning is logged). */
  readonly notification: RunNotification | null;
}

/** What `runJob` needs that a connection provides. */
export type RunEngine = Pick<RunJobOptions, 'client' | 'gate' | 'limits' | 'accountFingerprint'>;

/**
 * Runs the job, delivers a finished run, then announces the end. Rejects
 * with what `runJob` rejects with, once that end was announced too (an
 * invalid job or invalid options announce nothing: nothing ran).
 */
export async function runAndHandOff(
  engine: RunEngine,
  jobPath: string,
  options: ConnectionRunOptions = {},
): Promise<RunOutcome> {
  const { deliverTo, notify, env: givenEnv, resumeCommand: resume, onEnd, ...runOptions } = options;
  assertHandOffTargets(deliverTo, notify);
  const env = givenEnv ?? process.env;
  const logger = options.logger ?? silentLogger();
  const displayPath = options.displayPath ?? jobPath;
  const notifier = new RunNotifier({
    displayPath,
    resumeCommand: resume ?? defaultResumeCommand(displayPath, options),
    ...(notify ? { notify } : {}),
    ...(options.outDir ? { outDir: path.resolve(options.outDir) } : {}),
    env,
  });
  let handOff: RunHandOff;
  let end: RunEnd;
  try {
    const result = await runJob({
      ...runOptions,
      ...engine,
      jobPath,
      onEvent: (event) => {
        notifier.observe(event);
        options.onEvent?.(event);
      },
      onJobLoaded: (loaded) => {
        // A store endpoint that cannot work fails now, before anything is spent.
        if ((deliverTo ?? loaded.deliver?.to) !== undefined) s3EndpointOf(env);
        notifier.onJobLoaded(loaded);
        options.onJobLoaded?.(loaded);
      },
    });
    const delivered = await deliverAfterRun(result, {
      jobPath,
      displayPath,
      ...(options.journalPath ? { journalPath: options.journalPath } : {}),
      ...(deliverTo ? { to: deliverTo } : {}),
      env,
      ...(options.signal ? { signal: options.signal } : {}),
      logger,
    });
    handOff = { result, delivery: delivered.delivery ?? null, exitCode: delivered.exitCode };
    end = runEndOf(result, delivered);
  } catch (error) {
    onEnd?.({ error });
    await notifier.announce({ error }, logger);
    throw error;
  }
  onEnd?.(handOff);
  return { ...handOff, notification: await notifier.announce(end, logger) };
}

/** The end a notification tells: a failed delivery is the invocation's stop (its own reason). */
function runEndOf(result: RunResult, delivered: DeliveryAfterRun): RunEnd {
  const { delivery, exitCode, stopReason } = delivered;
  if (!delivery) return { result };
  if (!('error' in delivery)) {
    const { destination, outputs, sent, unchanged } = delivery;
    return { result, delivery: { destination, outputs, sent, unchanged } };
  }
  return {
    result: { ...result, exitCode, message: `${result.message}; ${delivery.error.message}` },
    delivery,
    ...(stopReason ? { stopReason } : {}),
  };
}

/** A destination or receiver that cannot work is refused before anything runs (exit 2). */
function assertHandOffTargets(
  deliverTo: string | undefined,
  notify: readonly string[] | undefined,
): void {
  const s3Problem = deliverTo === undefined ? undefined : s3UrlProblem(deliverTo);
  if (s3Problem) throw new UsageError(`\`deliverTo\` ${s3Problem}`);
  for (const url of notify ?? []) {
    const problem = notifyUrlProblem(url);
    // The value is not quoted back: a refused URL may carry a user name and password.
    if (problem) throw new UsageError(`\`notify\` ${problem}`);
  }
}

function defaultResumeCommand(displayPath: string, options: ConnectionRunOptions): string {
  return resumeCommand(displayPath, {
    ...(options.journalPath ? { journal: options.journalPath } : {}),
    ...(options.outDir ? { out: options.outDir } : {}),
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.maxSpend !== undefined ? { maxSpend: options.maxSpend } : {}),
    ...(options.offline ? { offline: true } : {}),
    ...(options.jobLimits?.maxItems !== undefined ? { maxItems: options.jobLimits.maxItems } : {}),
    ...(options.jobLimits?.allowOutsideJobFolder ? { allowOutsideJobFolder: true } : {}),
    ...(options.deliverTo ? { deliver: options.deliverTo } : {}),
  });
}
