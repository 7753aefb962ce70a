/**
 * Why a run stops early, and what that means for the work still going.
 *
 * - credits (budget reached, or a 402): no new creates; in-flight work
 *   finishes (it is paid for). Exit 3.
 * - unreachable (the service kept failing), unauthorized (401): nothing more
 *   can be done now; stop everything. Exit 4 / 5.
 * - interrupted (SIGINT/SIGTERM): stop creating, keep the journal consistent,
 *   exit 130 promptly. Submitted work is picked up by the next run.
 * - delivery: never stops the scheduler; `run` delivers only after the run
 *   finished, and a failed delivery leaves the run's status as it is. Exit 4.
 * The most serious reason wins when several happen.
 */
import { JournalWriteError, RUN_STATUS, type RunStatus } from '../journal/index.js';
import {
  EXIT,
  EXIT_FOR_STOP,
  type ExitCode,
  IbatchError,
  isIbatchError,
  STOP_REASONS,
  type StopReason,
} from '../shared/index.js';

/** Work given up because the run is stopping; the item stays resumable. */
export class RunStoppedError extends IbatchError {
  constructor(message: string) {
    super('run_stopped', message, EXIT.interrupted);
  }
}

// The reasons live with the exit codes they map to (shared/exit-codes.ts).
export { STOP_REASONS, type StopReason };

/**
 * What to do after an interrupted run (or one interrupted before it began):
 * the run's final message and the CLI's signal error both say it.
 */
export const RESUME_AFTER_INTERRUPT = 'Run the same command again to resume.';

/** What a `credits` stop ran into: the job's budget, the invocation's cap, or the account's balance. */
export type CreditsCap = 'budget' | 'max-spend' | 'balance';

const SEVERITY: Record<StopReason, number> = {
  delivery: 0,
  credits: 1,
  interrupted: 2,
  unreachable: 3,
  unauthorized: 4,
};

export class StopController {
  #reason: StopReason | undefined;
  #message = '';
  #creditsCap: CreditsCap | undefined;
  #nextStep: string | undefined;
  readonly #listeners: Array<(reason: StopReason) => void> = [];
  /** Aborted when in-flight work must stop too (everything but `credits`). */
  readonly hardStop = new AbortController();

  get reason(): StopReason | undefined {
    return this.#reason;
  }

  get message(): string {
    return this.#message;
  }

  /** For a `credits` stop: which cap stopped it (`balance` for a 402 from the service). */
  get creditsCap(): CreditsCap | undefined {
    return this.#creditsCap;
  }

  /**
   * What the user does next, when the stop's cause says it better than its
   * reason's usual advice (a full disk is no unreachable service).
   */
  get nextStep(): string | undefined {
    return this.#nextStep;
  }

  /** False once any stop was requested: no new create may start. */
  get mayCreate(): boolean {
    return this.#reason === undefined;
  }

  /** Calls `listener` once, at the first stop of any kind. */
  onStop(listener: (reason: StopReason) => void): void {
    this.#listeners.push(listener);
  }

  stop(
    reason: StopReason,
    message: string,
    creditsCap: CreditsCap = 'balance',
    nextStep?: string,
  ): void {
    if (this.#reason !== undefined && SEVERITY[this.#reason] >= SEVERITY[reason]) return;
    const first = this.#reason === undefined;
    this.#reason = reason;
    this.#message = message;
    this.#nextStep = nextStep;
    if (reason === 'credits') this.#creditsCap = creditsCap;
    if (reason !== 'credits' && !this.hardStop.signal.aborted) {
      this.hardStop.abort(new RunStoppedError(message));
    }
    if (first) for (const listener of this.#listeners) listener(reason);
  }
}

export function exitCodeOf(reason: StopReason): ExitCode {
  return EXIT_FOR_STOP[reason];
}

/**
 * The status of a run that an error ended (it escaped the run instead of
 * stopping it through the controller): the stop reason whose exit code the
 * error carries, so `status` and the exit code agree; `stopped_error` for
 * anything else.
 */
export function runStatusOfError(error: unknown): RunStatus {
  // Exit 4 like `unreachable`, but the service was fine: the journal's disk stopped it.
  if (error instanceof JournalWriteError) return RUN_STATUS.stoppedError;
  const reason = isIbatchError(error) ? error.stopReason : null;
  return reason ? runStatusOf(reason) : RUN_STATUS.stoppedError;
}

export function runStatusOf(reason: StopReason): RunStatus {
  switch (reason) {
    case 'credits':
      return RUN_STATUS.stoppedCredits;
    case 'unreachable':
      return RUN_STATUS.stoppedUnreachable;
    case 'unauthorized':
      return RUN_STATUS.stoppedUnauthorized;
    case 'interrupted':
      return RUN_STATUS.interrupted;
    case 'delivery':
      // Only a finished run delivers; its items stay as they are (docs/deliver.md).
      return RUN_STATUS.completed;
    default: {
      const never: never = reason;
      throw new Error(`unknown stop reason ${String(never)}`);
    }
  }
}
