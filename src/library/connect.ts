/**
 * `connect`: the shortest way for library users to get everything `runJob`
 * needs (client, rate gate, limits, account fingerprint) from a base URL and
 * a key. The CLI builds its client here too (src/cli/service.ts adds flag,
 * environment and `--emulator` handling), so CLI and library runners of an
 * account share Redis limits, uploads and trained influencers.
 */
import { type ClientEvent, createClient, type ServiceClient } from '../api/index.js';
import { type RateLimits, SERVICE_RATE_LIMITS } from '../contract/index.js';
import type { ValidatedJob } from '../job/index.js';
import { createGate, parseLimitsSpec, type RateGate } from '../limits/index.js';
import type { Plan, PlanOptions } from '../plan/index.js';
import {
  createConcurrencyForShare,
  PlanItems,
  planNextRun,
  type RunEvent,
  validateBeforeSpending,
} from '../scheduler/index.js';
import { accountFingerprint, type Logger } from '../shared/index.js';
import { type ConnectionRunOptions, type RunOutcome, runAndHandOff } from './run-and-hand-off.js';

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
  /** `redis://HOST:PORT`: share the limits with every runner of the account. @default none: local limits */
  readonly limitsStore?: string;
  /**
   * With `limitsStore`: this runner's weight in the shared buckets; while
   * runners wait, one with share 2 gets about twice the slots of one with
   * share 1. `run` keeps `createConcurrency` times the share of creates
   * waiting (`createConcurrencyForShare`) unless its options say otherwise.
   * @default 1
   */
  readonly share?: number;
  /** @default a silent logger */
  readonly logger?: Logger;
  /** Cancels every request and wait of the connection. @default none */
  readonly signal?: AbortSignal;
  /** Observes the client's retries (also delivered to `run`'s `onEvent`). @default none */
  readonly onEvent?: (event: ClientEvent) => void;
}

/** `validate`'s options. */
export interface ConnectionValidateOptions {
  /** The journal the preflight reads (asset URLs, this job's trainings). @default `.ibatch/journal.db` beside the job file (`defaultJournalPath`) */
  readonly journalPath?: string;
}

/** `plan`'s options: the quote's, and the journal it reads. */
export interface ConnectionPlanOptions extends PlanOptions, ConnectionValidateOptions {}

export interface Connection {
  readonly client: ServiceClient;
  readonly gate: RateGate;
  readonly limits: RateLimits;
  /** Identifies the account without the key (the same value the CLI uses). */
  readonly accountFingerprint: string;
  /**
   * Validates the job against the live model contracts and expands it into
   * items; a file with mistakes gets the preflight's too, in the one report.
   */
  validate(jobPath: string, options?: ConnectionValidateOptions): Promise<ValidatedJob>;
  /**
   * Validates then quotes what the next `run` would charge given the job's
   * journal (never charges; the journal is only read).
   */
  plan(jobPath: string, options?: ConnectionPlanOptions): Promise<Plan>;
  /**
   * Runs the job through this connection as `ibatch run` does: `runJob`,
   * then, when the run finished, the delivery its `deliver:` (or
   * `deliverTo`) names, then its end announced to the job's `notify:` and
   * `notify` receivers, whatever ended it. The client's retries arrive in
   * `onEvent` as `{ type: 'retry' }` events alongside the engine's own.
   * Rejects with what `runJob` rejects with (after announcing it).
   */
  run(jobPath: string, options?: ConnectionRunOptions): Promise<RunOutcome>;
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

  const validate = (jobPath: string, validateOptions: ConnectionValidateOptions = {}) =>
    validateBeforeSpending(jobPath, client, validateOptions);

  return {
    client,
    gate,
    limits,
    accountFingerprint: fingerprint,
    async validate(jobPath, validateOptions) {
      const { preflight: _, ...validated } = await validate(jobPath, validateOptions);
      return validated;
    },
    async plan(jobPath, planOptions = {}) {
      const { journalPath, ...quoteOptions } = planOptions;
      const { job, catalog, items, preflight } = await validate(jobPath, { journalPath });
      return planNextRun(
        {
          job,
          catalog,
          items: PlanItems.of(job, catalog, items),
          preflight,
          client,
          accountFingerprint: fingerprint,
          ...(journalPath ? { journalPath } : {}),
        },
        { requests: limits.requests, ...quoteOptions },
      );
    },
    async run(jobPath, runOptions = {}) {
      const onEvent = runOptions.onEvent;
      const forward = (event: ClientEvent) => onEvent?.(retryEventOf(event));
      listeners.add(forward);
      try {
        return await runAndHandOff(
          { client, gate, limits, accountFingerprint: fingerprint },
          jobPath,
          {
            ...(options.share === undefined
              ? {}
              : { createConcurrency: createConcurrencyForShare(options.share) }),
            ...runOptions,
            ...(options.logger && !runOptions.logger ? { logger: options.logger } : {}),
          },
        );
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
