/**
 * `openService`: how every command gets a client. With `--emulator` it starts
 * the emulator in-process and uses its first account; otherwise it reads
 * `--base-url`/IBATCH_BASE_URL and IBATCH_API_KEY (the key is never a flag).
 * Client, rate gate and account fingerprint come from the library's
 * `connect()`, so CLI and library runners of one account build them alike.
 *
 *   const service = await openService(io, opts);
 *   try { ... await service.client.getAccount() ... } finally { await service.close(); }
 */
import type { ClientEvent, ServiceClient } from '../api/index.js';
import type { RateLimits } from '../contract/index.js';
import { type Connection, connect } from '../library/index.js';
import type { RateGate } from '../limits/index.js';
import { type Logger, registerSecret, UsageError } from '../shared/index.js';
import { type CliLoggerOptions, cliLogger } from './cli-logger.js';
import type { CliIo } from './command.js';
import type { CommonOptions } from './options.js';

export interface OpenServiceOptions extends CommonOptions, CliLoggerOptions {
  /** Client-side rate limits (`ibatch run`'s `--limits`). @default the service's published limits */
  readonly limits?: RateLimits;
  /** `redis://HOST:PORT`: share the limits with every runner of the account. @default local limits */
  readonly limitsStore?: string | undefined;
  /** With `limitsStore`: this runner's weight in the shared buckets (`--share`). @default 1 */
  readonly share?: number | undefined;
  readonly onEvent?: (event: ClientEvent) => void;
  readonly signal?: AbortSignal;
  /** With `--emulator`: its time scale (rate windows and latencies divided by it). @default 1 */
  readonly emulatorTimeScale?: number;
}

export interface OpenedService {
  readonly client: ServiceClient;
  /** The rate gate every request of `client` passes (local, or shared through Redis). */
  readonly gate: RateGate;
  readonly limits: RateLimits;
  /** Base URL in use (with /api/v1). */
  readonly baseUrl: string;
  /** Logger on stderr, in the chosen format, with secrets redacted. */
  readonly logger: Logger;
  /** Identifies the account without revealing the key (the library's `connect` computes it). */
  readonly accountFingerprint: string;
  /** Present with `--emulator`: the running emulator (admin API, accounts). */
  readonly emulator: { readonly baseUrl: string; stop(): Promise<void> } | undefined;
  /** The library's `connect().run` through this service: `ibatch run` runs, delivers and notifies with it. */
  readonly run: Connection['run'];
  /** Closes the gate and the client and stops an in-process emulator. Safe to call twice. */
  close(): Promise<void>;
}

export async function openService(io: CliIo, options: OpenServiceOptions): Promise<OpenedService> {
  const logger = cliLogger(io, options);
  if (options.emulator) return openEmulator(io, options, logger);
  const baseUrl = options.baseUrl ?? io.env.IBATCH_BASE_URL;
  if (!baseUrl) {
    throw new UsageError(
      'Expected a base URL: pass --base-url URL or set IBATCH_BASE_URL (or use --emulator)',
    );
  }
  const apiKey = io.env.IBATCH_API_KEY;
  if (!apiKey) throw new UsageError('Expected an API key in IBATCH_API_KEY (or use --emulator)');
  const connection = connect({ baseUrl, apiKey, logger, ...connectExtras(options) });
  return opened(connection, logger, undefined);
}

async function openEmulator(
  io: CliIo,
  options: OpenServiceOptions,
  logger: Logger,
): Promise<OpenedService> {
  if (options.baseUrl) throw new UsageError('Expected either --emulator or --base-url, not both');
  // Loaded lazily: talking to the real service never loads the emulator.
  const { startEmulator } = await import('../emulator/index.js');
  const emulator = await startEmulator({ port: 0, timeScale: options.emulatorTimeScale ?? 1 });
  const account = emulator.accounts[0];
  if (!account) {
    await emulator.stop();
    throw new UsageError('the emulator started without an account');
  }
  registerSecret(account.apiKey);
  let connection: Connection;
  try {
    connection = connect({
      baseUrl: emulator.baseUrl,
      apiKey: account.apiKey,
      logger,
      ...connectExtras(options),
    });
  } catch (error) {
    await emulator.stop();
    throw error;
  }
  if (!options.json)
    io.stderr.write(`ibatch: using the in-process emulator at ${emulator.baseUrl}\n`);
  return opened(connection, logger, emulator);
}

function connectExtras(options: OpenServiceOptions) {
  return {
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.limitsStore ? { limitsStore: options.limitsStore } : {}),
    ...(options.share === undefined ? {} : { share: options.share }),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

function opened(
  connection: Connection,
  logger: Logger,
  emulator: OpenedService['emulator'],
): OpenedService {
  let closing: Promise<void> | undefined;
  return {
    client: connection.client,
    gate: connection.gate,
    limits: connection.limits,
    baseUrl: connection.client.baseUrl,
    logger,
    accountFingerprint: connection.accountFingerprint,
    emulator,
    run: (jobPath, options) => connection.run(jobPath, options),
    close() {
      closing ??= (async () => {
        await connection.close();
        await emulator?.stop();
      })();
      return closing;
    },
  };
}
