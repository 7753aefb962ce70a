/**
 * @module influencer-batch
 * The library API. The `ibatch` CLI is a thin layer over these exports.
 *
 * Glossary: a *job* is a YAML file of steps; a *run* is one resumable
 * execution of it, recorded in a local SQLite *journal*; an *item* is one
 * billable request (a generation or a training); the *gate* keeps every
 * request inside the account's rate limits (in this process, or shared by
 * every runner of the account through Redis).
 *
 * @example
 * ```ts
 * import { connect } from 'influencer-batch';
 *
 * const service = connect({ baseUrl: 'https://api.example.com/api/v1', apiKey: process.env.IBATCH_API_KEY! });
 * try {
 *   const plan = await service.plan('jobs/launch.yaml');
 *   if (plan.verdict === 'ok') {
 *     const result = await service.run('jobs/launch.yaml', {
 *       runId: 'nightly-2024-06-01',
 *       onEvent: (event) => { if (event.type === 'item-done') console.log(event.label, event.state); },
 *     });
 *     process.exitCode = result.exitCode;
 *   }
 * } finally {
 *   await service.close();
 * }
 * ```
 */
import { createHash } from 'node:crypto';
import { type ClientEvent, createClient, type ServiceClient } from './api/index.js';
import { type RateLimits, SERVICE_RATE_LIMITS } from './contract/index.js';
import type { EmulatorOptions, RunningEmulator } from './emulator/index.js';
import { type ValidatedJob, validateJob } from './job/index.js';
import { createGate, parseLimitsSpec, type RateGate } from './limits/index.js';
import { type Plan, type PlanOptions, planJob } from './plan/index.js';
import { type RunEvent, type RunJobOptions, type RunResult, runJob } from './scheduler/index.js';
import type { Logger } from './shared/index.js';

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
 * refused key, locked journal...).
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
export type { Plan, PlanOptions, PlanStep, QuoteClient, Verdict } from './plan/index.js';
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
export { RunChangedError } from './scheduler/index.js';
export { IbatchError, InterruptedError, isIbatchError, UsageError } from './shared/index.js';

// --- Building blocks ------------------------------------------------------------

export { SERVICE_RATE_LIMITS } from './contract/index.js';
/** Read-only access for dashboards: `openJournal(path, { readonly: true })`. */
export { openJournal } from './journal/index.js';
export { createGate, createLocalGate, formatLimits, parseLimitsSpec } from './limits/index.js';
export { createLogger, EXIT } from './shared/index.js';
export { VERSION } from './version.js';

// --- connect(): the short way in ----------------------------------------------

export interface ConnectOptions {
  /** Service base URL including `/api/v1`; https unless loopback. */
  readonly baseUrl: string;
  /** The account's API key. It never reaches a log, file, journal or Redis. */
  readonly apiKey: string;
  /**
   * Rate limits to keep to: an object or a spec like
   * `requests=120/60s,generations=20/60s`.
   * @default the service's published limits (SERVICE_RATE_LIMITS)
   */
  readonly limits?: RateLimits | string;
  /** `redis://HOST:PORT`: share the limits with every runner of the account. @default local limits */
  readonly limitsStore?: string;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Cancels every request and wait of the connection. */
  readonly signal?: AbortSignal;
  /** Observes the client's retries (also delivered to `run`'s `onEvent`). */
  readonly onEvent?: (event: ClientEvent) => void;
}

/** `runJob` options without what the connection already provides. */
export type ConnectionRunOptions = Omit<
  RunJobOptions,
  'jobPath' | 'client' | 'gate' | 'limits' | 'accountFingerprint'
>;

export interface Connection {
  readonly client: ServiceClient;
  readonly gate: RateGate;
  readonly limits: RateLimits;
  /** Identifies the account without the key (the same value the CLI uses). */
  readonly accountFingerprint: string;
  /** Validates the job against the live model contracts and expands it into items. */
  validate(jobPath: string): Promise<ValidatedJob>;
  /** Validates then quotes the job (never charges). */
  plan(jobPath: string, options?: PlanOptions): Promise<Plan>;
  /**
   * `runJob` through this connection. The client's retries arrive in
   * `onEvent` as `{ type: 'retry' }` events alongside the engine's own.
   */
  run(jobPath: string, options?: ConnectionRunOptions): Promise<RunResult>;
  /** Closes the gate and the client. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Builds everything `runJob` needs from a base URL and a key: the client, a
 * rate gate (local, or shared through Redis with `limitsStore`) and the
 * account fingerprint.
 */
export function connect(options: ConnectOptions): Connection {
  const limits =
    typeof options.limits === 'string'
      ? parseLimitsSpec(options.limits)
      : (options.limits ?? SERVICE_RATE_LIMITS);
  // Same fingerprint as src/cli/service.ts: library and CLI runners of one
  // account share assets, trained influencers and Redis limits.
  const accountFingerprint = createHash('sha256').update(options.apiKey).digest('hex').slice(0, 16);
  const gate = createGate(limits, {
    store: options.limitsStore,
    accountKey: accountFingerprint,
    ...(options.logger ? { logger: options.logger } : {}),
  });
  const listeners = new Set<(event: ClientEvent) => void>();
  if (options.onEvent) listeners.add(options.onEvent);
  let client: ServiceClient;
  try {
    client = createClient({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      gate,
      onEvent: (event) => {
        for (const listener of listeners) listener(event);
      },
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } catch (error) {
    // A refused base URL must not leave the gate's timers (or Redis) open.
    gate.close();
    throw error;
  }
  let closing: Promise<void> | undefined;

  const validate = (jobPath: string) =>
    validateJob(jobPath, { lister: client, baseUrl: client.baseUrl });

  return {
    client,
    gate,
    limits,
    accountFingerprint,
    validate,
    async plan(jobPath, planOptions = {}) {
      const { job, items } = await validate(jobPath);
      return planJob(job, items, client, { requests: limits.requests, ...planOptions });
    },
    async run(jobPath, runOptions = {}) {
      const onEvent = runOptions.onEvent;
      const forward = (event: ClientEvent) => onEvent?.(retryEventOf(event));
      listeners.add(forward);
      try {
        return await runJob({
          ...runOptions,
          jobPath,
          client,
          gate,
          limits,
          accountFingerprint,
          ...(options.logger && !runOptions.logger ? { logger: options.logger } : {}),
        });
      } finally {
        listeners.delete(forward);
      }
    },
    close() {
      closing ??= (async () => {
        gate.close();
        await client.close();
      })();
      return closing;
    },
  };
}

function retryEventOf(event: ClientEvent): RunEvent {
  return {
    type: 'retry',
    endpoint: event.endpoint,
    attempt: event.attempt,
    delayMs: event.delayMs,
    reason: event.reason,
  };
}
