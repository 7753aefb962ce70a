/**
 * The job's `notify:` and the invocation's own receivers (`run --notify URL`,
 * `connect().run`'s `notify`): when a run invocation ends, its end goes to
 * each receiver (src/notify), whatever ended it: a result (finished, items
 * failed, or a stop the run recorded) or an error that escaped (a stop before any run existed, such as a key refused or the
 * service unreachable at the start, or an interrupt while waiting). An
 * invalid job file or invalid arguments (exit 2) announce nothing: nothing
 * ran, and the one who started it reads the message.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type LoadedJob, mergeTargets } from '../job/index.js';
import type { Spend, StepProgress } from '../journal/index.js';
import {
  type Delivery,
  type RunDeliveryFacts,
  type RunEndEvent,
  type RunEndFacts,
  runEndEvent,
  sendNotifications,
} from '../notify/index.js';
import { REPORT_FILE, reportFileOf } from '../outputs/index.js';
import { countsOf, type RunEvent, type RunResult, runStatusOfError } from '../scheduler/index.js';
import {
  EXIT,
  ensureIbatchError,
  type Logger,
  registerSecret,
  type StopReason,
} from '../shared/index.js';

/**
 * How the invocation ended: the run's result (with what its delivery did,
 * and `delivery` as the stop reason when that failed), or an error that escaped.
 */
export type RunEnd =
  | {
      readonly result: RunResult;
      readonly delivery?: RunDeliveryFacts;
      readonly stopReason?: StopReason;
    }
  | { readonly error: unknown };

/** What a run's end sent: the event, and what each receiver made of it. */
export interface RunNotification {
  /** The payload (the JSON event; a Slack receiver got its message made from it). */
  readonly event: RunEndEvent;
  /** One per receiver: its URL, whether it took the event, after how many attempts. */
  readonly receivers: readonly Delivery[];
}

export interface RunNotifierOptions {
  /** The job file as the user named it (`jobFile` in the event). */
  readonly displayPath: string;
  /** The command that resumes the run (`resume` in the event of a stop). */
  readonly resumeCommand: string;
  /** Receivers added to the job's `notify:`. */
  readonly notify?: readonly string[];
  /** The output folder instead of the job's `output`, absolute. */
  readonly outDir?: string;
  /** Where `IBATCH_NOTIFY_SECRET` (signs each body) is read. */
  readonly env: NodeJS.ProcessEnv;
}

export class RunNotifier {
  readonly #startedAt = new Date();
  #job: LoadedJob | undefined;
  #runId: string | null = null;
  #steps: readonly StepProgress[] | undefined;
  #spend: Spend | undefined;

  constructor(private readonly options: RunNotifierOptions) {
    registerSecret(this.#secret);
  }

  get #secret(): string | undefined {
    return this.options.env.IBATCH_NOTIFY_SECRET || undefined;
  }

  readonly onJobLoaded = (job: LoadedJob): void => {
    this.#job = job;
  };

  /** Remembers the run and its progress, for an end that comes as an error. */
  observe(event: RunEvent): void {
    if (event.type === 'run-started') this.#runId = event.runId;
    else if (event.type === 'progress') {
      this.#steps = event.snapshot.steps;
      this.#spend = event.snapshot.spend;
    } else if (event.type === 'spend') this.#spend = event.spend;
  }

  /**
   * Sends the end to every receiver; never throws, never takes longer than
   * the notify bound. Null when nothing was sent: no receiver, a job that
   * never loaded, an invalid job (exit 2), or a failure logged as a warning.
   */
  async announce(end: RunEnd, logger: Logger): Promise<RunNotification | null> {
    const job = this.#job;
    if (!job) return null;
    const targets = mergeTargets(job.notify, this.options.notify ?? []);
    if (targets.length === 0) return null;
    const facts = 'result' in end ? this.#ofResult(job, end) : this.#ofError(job, end.error);
    if (!facts) return null;
    const event = runEndEvent(facts);
    try {
      const receivers = await sendNotifications(targets, event, { secret: this.#secret, logger });
      return { event, receivers };
    } catch (error) {
      logger.warn({ err: String(error) }, 'notifications not sent; the exit code is unchanged');
      return null;
    }
  }

  #ofResult(job: LoadedJob, end: Extract<RunEnd, { result: RunResult }>): RunEndFacts {
    const { result } = end;
    return {
      ...this.#common(job),
      runId: result.runId || null,
      status: result.status,
      exitCode: result.exitCode,
      ...(end.stopReason ? { stopReason: end.stopReason } : {}),
      ...(end.delivery ? { delivery: end.delivery } : {}),
      message: result.message,
      counts: result.counts,
      ...(result.done !== undefined ? { done: result.done } : {}),
      credits: result.spend,
      budget: result.budget,
      outputDir: result.outputDir,
      report: result.report ?? reportIn(result.outputDir, job.name),
    };
  }

  #ofError(job: LoadedJob, error: unknown): RunEndFacts | undefined {
    const failure = ensureIbatchError(error);
    if (failure.exitCode === EXIT.invalid) return undefined;
    const outputDir = this.options.outDir ?? job.output;
    return {
      ...this.#common(job),
      runId: this.#runId,
      status: runStatusOfError(error),
      exitCode: failure.exitCode,
      message: failure.message,
      counts: this.#steps
        ? countsOf(this.#steps)
        : { succeeded: 0, failed: 0, blocked: 0, skipped: 0, pending: 0 },
      credits: this.#spend ?? { charged: 0, refunded: 0, net: 0 },
      budget: job.budget ?? null,
      outputDir,
      report: reportIn(outputDir, job.name),
    };
  }

  #common(job: LoadedJob) {
    return {
      job: job.name,
      jobFile: this.options.displayPath,
      resumeCommand: this.options.resumeCommand,
      startedAt: this.#startedAt,
      endedAt: new Date(),
    };
  }
}

/** The job's report in `outputDir`, if one is there (its own when it shares the folder). */
function reportIn(outputDir: string, job: string): string | null {
  for (const name of [reportFileOf(job, false), REPORT_FILE]) {
    const report = path.join(outputDir, name);
    if (existsSync(report)) return report;
  }
  return null;
}
