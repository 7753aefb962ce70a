/**
 * What every stage of a run shares. Built once per run by `driveRun`; stages receive it
 * instead of reaching for globals, so tests can assemble one around a real
 * journal and emulator.
 */
import type PQueue from 'p-queue';
import type { ServiceClient } from '../api/index.js';
import type { LoadedJob, ModelCatalog } from '../job/index.js';
import type { Journal, RunSpendCap } from '../journal/index.js';
import type { QuoteCache } from '../plan/index.js';
import type { Logger } from '../shared/index.js';
import type { CompletionWatcher } from './completion-watcher.js';
import type { StopController } from './stop-control.js';
import type { RunEvent } from './types.js';

export interface RunContext {
  readonly runId: string;
  readonly job: LoadedJob;
  readonly catalog: ModelCatalog;
  readonly journal: Journal;
  readonly client: ServiceClient;
  /** Where assets and influencers may be reused: service + account, never the key. */
  readonly scope: string;
  readonly outputDir: string;
  /** Where no output may land: the journal's files, the model cache, the job file and its inputs. */
  readonly protectedPaths: readonly string[];
  readonly stop: StopController;
  /** `--max-spend` as a ceiling on this run's committed credits. */
  readonly spendCap?: RunSpendCap;
  /** `$IBATCH_TRAINING_ESTIMATE` (RunJobOptions.trainingEstimate). */
  readonly trainingEstimate?: number;
  readonly watcher: CompletionWatcher;
  readonly quotes: QuoteCache;
  /** Bounds how many creates wait at the rate gate at once. */
  readonly createQueue: PQueue;
  /** How much faster than the service's published windows the limits run (tests scale both). */
  readonly speed: number;
  readonly logger: Logger;
  /**
   * `run --forget-lost`: an attempt whose generation or training the service
   * does not know is failed (its charge kept) and made again, instead of
   * stopping the run (not-known.ts).
   */
  readonly forgetLost?: boolean;
  emit(event: RunEvent): void;
  /**
   * Appends to the run's timeline (report, status) and logs it. `label`: the
   * item's label as the message quotes it (the log's `label` field, which a
   * terminal line shortens first).
   */
  record(
    type: string,
    message: string,
    itemKey?: string,
    data?: Record<string, unknown>,
    label?: string,
  ): void;
}
