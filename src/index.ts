/**
 * @module influencer-batch
 * The library API. The `ibatch` CLI is a thin layer over these exports.
 *
 * Terms (job, run, item, journal, gate, ...): docs/glossary.md.
 *
 * @example
 * ```ts
 * import { connect } from 'influencer-batch';
 *
 * const service = connect({ baseUrl: 'https://api.example.com/api/v1', apiKey: process.env.IBATCH_API_KEY! });
 * try {
 *   const plan = await service.plan('jobs/launch.yaml');
 *   if (plan.verdict === 'ok') {
 *     // The run, then its `deliver:` (when it finished), then its `notify:`, as `ibatch run` does.
 *     const { result, delivery, exitCode } = await service.run('jobs/launch.yaml', {
 *       runId: 'nightly-2024-06-01',
 *       onEvent: (event) => { if (event.type === 'item-done') console.log(event.label, event.state); },
 *     });
 *     console.log(result.message, delivery && 'error' in delivery ? delivery.error.message : '');
 *     process.exitCode = exitCode;
 *   }
 * } finally {
 *   await service.close();
 * }
 * ```
 */
import type { EmulatorOptions, RunningEmulator } from './emulator/index.js';

// --- The five core functions -------------------------------------------------

/** Creates the typed, retrying HTTP client of the service. See {@link ClientOptions}. */
export { createClient } from './api/index.js';
/** Reads and checks a job file (schema and structure); throws {@link JobFileError}. */
export { expandJob, loadJob, validateJob } from './job/index.js';
/** Quotes a job with preview-credits: never charges. */
export { planJob } from './plan/index.js';
/**
 * Runs a job, resuming its unfinished run from the journal. Resolves with a
 * {@link RunResult} whose `exitCode` follows the CLI's exit codes; rejects only
 * on problems that stop the run before or outside its items (invalid job,
 * refused key, locked journal...). The run alone: `connect().run` also
 * delivers (`deliver:`) and notifies (`notify:`), as `ibatch run` does.
 */
export { runJob } from './scheduler/index.js';

/**
 * Starts the service emulator on loopback (for tests, demos and examples).
 * Loaded on first call, so programs that talk to the real service never load it.
 */
export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const emulator = await import('./emulator/index.js');
  return emulator.startEmulator(options);
}

// --- Types of options, results and events ------------------------------------

export type {
  CallOptions,
  ClientEvent,
  ClientOptions,
  RetryEvent,
  RetryOptions,
  RetryReason,
  ServiceClient,
} from './api/index.js';
export type { Bucket, RateLimits, RateWindow } from './contract/index.js';
export type { DeliveryResult } from './deliver/index.js';
export type {
  AccountSeed,
  Behaviour,
  EmulatorAdmin,
  EmulatorOptions,
  EmulatorStats,
  FaultConfig,
  FaultKind,
  FaultScript,
  RunningEmulator,
} from './emulator/index.js';
export type {
  Expansion,
  JobIssue,
  JobItem,
  LoadedJob,
  LoadOptions,
  ValidatedJob,
  ValidateOptions,
} from './job/index.js';
export type {
  Journal,
  OpenJournalOptions,
  RunRecord,
  RunStatus,
  Spend,
  StepProgress,
} from './journal/index.js';
export type {
  CreateGateOptions,
  FallbackEvent,
  GateSnapshot,
  LocalGateOptions,
  RateGate,
} from './limits/index.js';
export type { Delivery as NotifyDelivery, RunEndEvent } from './notify/index.js';
export type {
  Plan,
  PlanOptions,
  PlanStep,
  QuoteClient,
  TrainingPrice,
  Verdict,
} from './plan/index.js';
export type {
  ItemOutcomeState,
  ProgressSnapshot,
  RunEvent,
  RunJobOptions,
  RunResult,
} from './scheduler/index.js';
export type { ExitCode, LogFormat, Logger, RequestGate } from './shared/index.js';

// --- Errors users may catch (each has a stable `code` and an `exitCode`) -----

export { ApiError, ContractError, NetworkError, TimeoutError } from './api/index.js';
export { JobFileError, ModelCatalogError } from './job/index.js';
export {
  JournalLockedError,
  JournalMissingError,
  JournalVersionError,
} from './journal/index.js';
export { GateClosedError } from './limits/index.js';
export { PlanDoesNotFitError } from './plan/index.js';
export {
  OutputFolderLockedError,
  OutputFolderOwnedError,
  ServiceChangedError,
} from './scheduler/index.js';
export { IbatchError, InterruptedError, isIbatchError, UsageError } from './shared/index.js';

// --- Building blocks ------------------------------------------------------------

export { SERVICE_RATE_LIMITS } from './contract/index.js';
/** Read-only access for dashboards: `openJournal(path, { readonly: true })`. */
export { openJournal } from './journal/index.js';
export { createGate, createLocalGate, formatLimits, parseLimitsSpec } from './limits/index.js';
export { createLogger, EXIT } from './shared/index.js';
export { VERSION } from './version.js';

// --- connect(): the short way in ----------------------------------------------

// Connecting in one call, and what a run hands off (delivery, notification)
export {
  type Connection,
  type ConnectionPlanOptions,
  type ConnectionRunOptions,
  type ConnectionValidateOptions,
  type ConnectOptions,
  connect,
  type FailedDelivery,
  type HandOffOptions,
  type RunDelivery,
  type RunHandOff,
  type RunNotification,
  type RunOutcome,
} from './library/index.js';
