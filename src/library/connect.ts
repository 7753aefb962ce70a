/**
 * `connect`: the shortest way for library users to get everything `runJob`
 * needs (client, rate gate, limits, account fingerprint) from a base URL and
 * a key. The CLI builds its client here too (src/cli/service.ts adds flag,
 * environment and `--emulator` handling), so CLI and library runners of an
 * account share Redis limits, uploads and trained influencers.
 */
import { type ClientEvent, createClient, type ServiceClient } from '../api/index.js';
import { type RateLimits, SERVICE_RATE_LIMITS } from '../contract/index.js';
import { defaultJournalPath, type ValidatedJob, validateJob } from '../job/index.js';
import { createGate, parseLimitsSpec, type RateGate } from '../limits/index.js';
import type { Plan, PlanOptions } from '../plan/index.js';
import {
  issuesBeforeSpending,
  PlanItems,
  planNextRun,
  preflightOf,
  type RunEvent,
  type RunJobOptions,
  type RunResult,
  runJob,
} from '../scheduler/index.js';
import { accountFingerprint, type Logger } from '../shared/index.js';

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
  /**
   * With `limitsStore`: this runner's weight in the shared buckets; while
   * runners wait, one with share 2 gets about twice the slots of one with
   * share 1. @default 1
   */
  readonly share?: number;
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
  /**
   * Validates then quotes what the next `run` would charge given the job's
   * journal (never charges; the journal is only read).
   */
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
  // The CLI's fingerprint too: library and CLI runners of one account share
  // assets, trained influencers and Redis limits.
  const fingerprint = accountFingerprint(options.apiKey);
  const gate = createGate(limits, {
    store: options.limitsStore,
    share: options.share,
    accountKey: fingerprint,
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

  // A file with mistakes gets the preflight's too, in the one report `run` gives.
  const validate = (jobPath: string) =>
    validateJob(jobPath, {
      lister: client,
      baseUrl: client.baseUrl,
      serviceChecks: (job, catalog, items) =>
        issuesBeforeSpending(preflightOf(job, catalog, items), client, defaultJournalPath(job.dir)),
    });

  return {
    client,
    gate,
    limits,
    accountFingerprint: fingerprint,
    validate,
    async plan(jobPath, planOptions = {}) {
      const { job, catalog, items } = await validate(jobPath);
      return planNextRun(
        {
          job,
          catalog,
          items: PlanItems.of(job, catalog, items),
          preflight: preflightOf(job, catalog, items),
          client,
          accountFingerprint: fingerprint,
        },
        { requests: limits.requests, ...planOptions },
      );
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
          accountFingerprint: fingerprint,
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
