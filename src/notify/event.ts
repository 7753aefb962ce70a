/**
 * The JSON event a run's end sends (docs/notify.md): the interface's fields
 * (`event`, `runId`, `job`, `status`, `exitCode`, `counts`, `credits`) plus
 * what a person reading it in a chat or a pager needs to act.
 */
import { type ExitCode, redactDeep, type StopReason, stopReasonForExit } from '../shared/index.js';
import { VERSION } from '../version.js';

export interface RunCounts {
  readonly succeeded: number;
  readonly failed: number;
  readonly blocked: number;
  readonly skipped: number;
  readonly pending: number;
}

export interface RunCredits {
  readonly charged: number;
  readonly refunded: number;
  readonly net: number;
}

/**
 * What a run's delivery (`--deliver`, `deliver:`) did: how many objects were
 * sent or already there, and, when the store failed, the error.
 */
export interface RunDeliveryFacts {
  /** `s3://bucket/prefix`; null when the delivery failed before it knew. */
  readonly destination: string | null;
  readonly sent: number;
  readonly unchanged: number;
  /** Output files delivered (a delivery that completed). */
  readonly outputs?: number;
  /** Objects the delivery had to make present (one that failed). */
  readonly objects?: number;
  readonly error?: { readonly code: string; readonly message: string };
}

/** What the caller knows when a `run` invocation ends. */
export interface RunEndFacts {
  /** The run this invocation made or resumed; null when it stopped before one existed. */
  readonly runId: string | null;
  /** The job's `name`. */
  readonly job: string;
  /** The job file as the user named it. */
  readonly jobFile: string;
  /** The run's status in the journal (as `ibatch status` shows it). */
  readonly status: string;
  readonly exitCode: ExitCode;
  /** Why it stopped, when the exit code alone does not say (`delivery` shares exit 4). */
  readonly stopReason?: StopReason | null;
  /** The run's last line for a person: what happened and what to do next. */
  readonly message: string;
  /** Items of this invocation. */
  readonly counts: RunCounts;
  /** Items of the job done by earlier runs (a run with nothing left to do). */
  readonly done?: number;
  /** Credits of this invocation's run. */
  readonly credits: RunCredits;
  readonly budget: number | null;
  readonly outputDir: string | null;
  /** `report.html`, when there is one. */
  readonly report: string | null;
  /** The command that resumes the run (only a stop is resumed). */
  readonly resumeCommand: string;
  /** When the run delivered its outputs. */
  readonly delivery?: RunDeliveryFacts;
  readonly startedAt: Date;
  readonly endedAt: Date;
}

export interface RunEndEvent {
  readonly event: 'run.finished' | 'run.stopped';
  readonly runId: string | null;
  readonly job: string;
  readonly jobFile: string;
  readonly status: string;
  readonly exitCode: ExitCode;
  /**
   * Why the run stopped (`credits`, `unreachable`, `unauthorized`,
   * `interrupted`, `delivery`); null when it finished.
   */
  readonly stopReason: StopReason | null;
  readonly message: string;
  readonly counts: RunCounts;
  readonly done: number;
  readonly credits: RunCredits;
  readonly budget: number | null;
  readonly outputDir: string | null;
  readonly report: string | null;
  /** The command to run again when the run stopped; null when it finished. */
  readonly resume: string | null;
  /** Present when the run delivered (or tried to deliver) its outputs. */
  readonly delivery?: RunDeliveryFacts;
  readonly startedAt: string;
  readonly endedAt: string;
  readonly ibatch: { readonly version: string };
}

/** The event of `facts`, redacted like every other sink (a stop message may quote the service). */
export function runEndEvent(facts: RunEndFacts): RunEndEvent {
  const stopReason =
    facts.stopReason === undefined ? stopReasonForExit(facts.exitCode) : facts.stopReason;
  const { charged, refunded, net } = facts.credits;
  return redactDeep({
    event: stopReason === null ? 'run.finished' : 'run.stopped',
    runId: facts.runId,
    job: facts.job,
    jobFile: facts.jobFile,
    status: facts.status,
    exitCode: facts.exitCode,
    stopReason,
    message: facts.message,
    counts: { ...facts.counts },
    done: facts.done ?? 0,
    credits: { charged, refunded, net },
    budget: facts.budget,
    outputDir: facts.outputDir,
    report: facts.report,
    resume: stopReason === null ? null : facts.resumeCommand,
    ...(facts.delivery ? { delivery: { ...facts.delivery } } : {}),
    startedAt: facts.startedAt.toISOString(),
    endedAt: facts.endedAt.toISOString(),
    ibatch: { version: VERSION },
  });
}
