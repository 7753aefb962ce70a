/**
 * Options, events and results of a run. Terms: docs/glossary.md.
 */
import type { ServiceClient } from '../api/index.js';
import type { RateLimits } from '../contract/index.js';
import type { JobLimits, LoadedJob } from '../job/index.js';
import type {
  ITEM_STATE,
  RunStatus,
  Spend,
  StepProgress,
  TerminalItemState,
} from '../journal/index.js';
import type { RateGate } from '../limits/index.js';
import type { ExitCode, Logger } from '../shared/index.js';

/**
 * The defaults of {@link RunJobOptions} that are values, written once: the
 * engine reads them here and each field's `@default` states them (a test
 * compares the two).
 */
export const RUN_DEFAULTS = {
  downloadConcurrency: 4,
  createConcurrency: 4,
  completeFromHistory: true,
} as const;

/**
 * The creates a runner keeps waiting at a shared gate for its share of the
 * limits: `createConcurrency` per unit of share. A saturated sliding log
 * frees its slots in bursts (each returns a window after it was taken, and
 * takes come bunched), and a runner gets from a burst only the tickets it has
 * waiting plus those it sends again before the burst is over. With the same
 * few waiting each, runners take about the same from every burst whatever
 * their shares, the more so the slower their round trip (a busy machine);
 * waiting in proportion to the share lets the gate's fair order decide.
 */
export function createConcurrencyForShare(share: number): number {
  return Math.max(1, Math.round(RUN_DEFAULTS.createConcurrency * share));
}

export interface RunJobOptions {
  /** Path of the job file. */
  readonly jobPath: string;
  /** The job file's path in messages, as the user gave it. @default `jobPath` */
  readonly displayPath?: string;
  /** The service client; its gate must be `gate` so every request is counted. */
  readonly client: ServiceClient;
  readonly gate: RateGate;
  /** The limits `gate` enforces (the watcher paces polls from them). */
  readonly limits: RateLimits;
  /**
   * Identifies the account without the key: `accountFingerprint(apiKey)` of
   * src/shared, which journals store in asset and influencer scopes (another
   * value means earlier uploads and trainings are not reused).
   */
  readonly accountFingerprint: string;
  /** @default `.ibatch/journal.db` beside the job file (`defaultJournalPath`) */
  readonly journalPath?: string;
  /** Names the run: reproducible idempotency keys on another machine. @default a new random id (`newRunId`) */
  readonly runId?: string;
  /**
   * `--fresh [STEP...]`: make the done items of these steps again, with new
   * keys (every step for `true` or an empty list). An unfinished run is
   * finished first and the fresh items are added to it.
   * @default none: done items are kept
   */
  readonly fresh?: true | readonly string[];
  /** `--max-spend`: most credits this invocation may commit (exit 3 when reached). @default no cap beyond the job's budget */
  readonly maxSpend?: number;
  /**
   * Start only when the next run's planned total (`plan`'s figures) fits the
   * budget left, `maxSpend` and the balance; else throw `PlanDoesNotFitError`
   * (exit 3) before anything is recorded or spent.
   * @default the job's `allOrNothing:` (false)
   */
  readonly allOrNothing?: boolean;
  /**
   * Credits of one training while no training charge on the account is in the
   * journal and the job sets no `trainingEstimate:` (`$IBATCH_TRAINING_ESTIMATE`).
   * @default ASSUMED_TRAINING_PRICE (src/plan/training-price.ts)
   */
  readonly trainingEstimate?: number;
  /** Overrides the job's `output`. @default the job's `output:` */
  readonly outDir?: string;
  /**
   * `--service-moved`: the job's unfinished run was made on another base URL
   * that is this same service at a new address: resume it here with its
   * idempotency keys (without it, such a run is refused: `ServiceChangedError`).
   * @default false
   */
  readonly serviceMoved?: boolean;
  /**
   * The client talks to an emulator this process started (`--emulator`): its
   * runs can never be resumed elsewhere, so a later run on another service
   * is not refused for them.
   * @default false
   */
  readonly inProcessEmulator?: boolean;
  /** Wait for another process holding the journal instead of failing. @default false */
  readonly waitForLock?: boolean;
  /** Use cached model contracts only. @default false */
  readonly offline?: boolean;
  /** Ceilings on what the job file may ask for, other than the defaults (`--max-items`). @default DEFAULT_JOB_LIMITS (src/job/limits.ts) */
  readonly jobLimits?: Partial<JobLimits>;
  /** Most downloads at once. @default 4 */
  readonly downloadConcurrency?: number;
  /** Most create requests waiting at the rate gate at once. @default 4 */
  readonly createConcurrency?: number;
  /**
   * Complete a single-copy generation from the shared history poll when its
   * entry proves the success, without a status read of its own
   * (docs/polling.md); false reads every generation by id. @default true
   */
  readonly completeFromHistory?: boolean;
  /**
   * `--forget-lost`: generations and trainings the journal recorded as
   * created that the service answers 404 for (it lost them) are recorded as
   * failed, their charge kept, and made again under new keys. Without it such
   * an id stops the run (exit 5): the key or base URL may have changed.
   * @default false
   */
  readonly forgetLost?: boolean;
  /** Stop creating on abort (SIGINT/SIGTERM): the run exits 130, resumable. @default none */
  readonly signal?: AbortSignal;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Progress, item outcomes and waits, as they happen. @default none */
  readonly onEvent?: (event: RunEvent) => void;
  /** The job, once its file loaded without mistakes (before any request): `--notify` names it. @default none */
  readonly onJobLoaded?: (job: LoadedJob) => void;
}

/** How an item ended: one of the journal's terminal item states. */
export type ItemOutcomeState = TerminalItemState;

export interface ProgressSnapshot {
  readonly runId: string;
  readonly steps: readonly StepProgress[];
  readonly spend: Spend;
  readonly budget: number | null;
  /** Account-wide pause (a 429's Retry-After), epoch ms. */
  readonly pausedUntil: number | undefined;
  /**
   * Requests are waiting for our own rate limits (not a pause): when the next
   * slot of a full bucket frees up, epoch ms. Undefined when nothing waits.
   */
  readonly rateWaitUntil?: number | undefined;
  readonly inFlight: number;
  /** When the snapshot was taken (epoch ms). */
  readonly at?: number;
}

export type RunEvent =
  | {
      readonly type: 'run-started';
      readonly runId: string;
      readonly resumed: boolean;
      readonly items: number;
    }
  | { readonly type: 'progress'; readonly snapshot: ProgressSnapshot }
  | {
      readonly type: 'item-done';
      readonly stepId: string;
      readonly itemKey: string;
      readonly label: string;
      readonly state: ItemOutcomeState;
      readonly error?: string;
    }
  | {
      readonly type: 'retry';
      readonly endpoint: string;
      readonly attempt: number;
      readonly delayMs: number;
      readonly reason: string;
    }
  | { readonly type: 'spend'; readonly spend: Spend }
  | { readonly type: 'pause'; readonly until: number }
  | { readonly type: 'warning'; readonly message: string }
  | { readonly type: 'run-finished'; readonly result: RunResult };

export interface RunResult {
  readonly runId: string;
  readonly status: RunStatus;
  readonly exitCode: ExitCode;
  /** One line for a person: what happened and what to do next. */
  readonly message: string;
  readonly spend: Spend;
  readonly budget: number | null;
  readonly counts: Readonly<Record<ItemOutcomeState | typeof ITEM_STATE.pending, number>>;
  /** Absolute output folder. */
  readonly outputDir: string;
  /**
   * The job's report (absolute), when the run wrote one: `report.html`, or
   * `report-JOB.html` for a job sharing its folder with an earlier one
   * (docs/outputs.md "Report").
   */
  readonly report?: string;
  /** True when nothing was left to make (no run was started or resumed). */
  readonly alreadyFinished: boolean;
  /** Items of the job done by earlier runs (not made again). */
  readonly done?: number;
}
