/**
 * `openService`: how every command gets a client. With `--emulator` it starts
 * the emulator in-process and uses its first account; otherwise it reads
 * `--base-url`/IBATCH_BASE_URL and IBATCH_API_KEY (the key is never a flag).
 *
 *   const service = await openService(io, opts);
 *   try { ... await service.client.getAccount() ... } finally { await service.close(); }
 */
import { createHash } from 'node:crypto';
import { type ClientEvent, createClient, type ServiceClient } from '../api/index.js';
import {
  createLogger,
  LOG_FORMATS,
  type LogFormat,
  type Logger,
  type RequestGate,
  registerSecret,
  UsageError,
} from '../shared/index.js';
import type { CliIo } from './command.js';
import type { CommonOptions } from './options.js';

export interface OpenServiceOptions extends CommonOptions {
  /** The scheduler's rate limiter; the client's pause-on-429 gate when absent. */
  readonly gate?: RequestGate;
  /** Where logs go instead of stderr (the run's progress display owns the terminal). */
  readonly logDestination?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Builds the gate once the account is known (shared limits are per account). */
  readonly makeGate?: (accountFingerprint: string) => RequestGate;
  readonly onEvent?: (event: ClientEvent) => void;
  readonly signal?: AbortSignal;
  /** With `--emulator`: its time scale (rate windows and latencies divided by it). @default 1 */
  readonly emulatorTimeScale?: number;
}

export interface OpenedService {
  readonly client: ServiceClient;
  /** Base URL in use (with /api/v1). */
  readonly baseUrl: string;
  /** Logger on stderr, in the chosen format, with secrets redacted. */
  readonly logger: Logger;
  /** Identifies the account without revealing the key (sha256 prefix of it). */
  readonly accountFingerprint: string;
  /** Present with `--emulator`: the running emulator (admin API, accounts). */
  readonly emulator: { readonly baseUrl: string; stop(): Promise<void> } | undefined;
  /** Closes the client and stops an in-process emulator. Safe to call twice. */
  close(): Promise<void>;
}

export async function openService(io: CliIo, options: OpenServiceOptions): Promise<OpenedService> {
  const logger = createLogger({
    format: logFormat(io, options),
    destination: options.logDestination ?? io.stderr,
  });
  if (options.emulator) return openEmulator(io, options, logger);
  const baseUrl = options.baseUrl ?? io.env.IBATCH_BASE_URL;
  if (!baseUrl) {
    throw new UsageError(
      'Expected a base URL: pass --base-url URL or set IBATCH_BASE_URL (or use --emulator)',
    );
  }
  const apiKey = io.env.IBATCH_API_KEY;
  if (!apiKey) throw new UsageError('Expected an API key in IBATCH_API_KEY (or use --emulator)');
  const client = createClient({
    baseUrl,
    apiKey,
    logger,
    ...clientExtras(options, fingerprint(apiKey)),
  });
  return {
    client,
    baseUrl: client.baseUrl,
    logger,
    accountFingerprint: fingerprint(apiKey),
    emulator: undefined,
    close: once(() => client.close()),
  };
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
  const client = createClient({
    baseUrl: emulator.baseUrl,
    apiKey: account.apiKey,
    logger,
    ...clientExtras(options, fingerprint(account.apiKey)),
  });
  if (!options.json)
    io.stderr.write(`ibatch: using the in-process emulator at ${emulator.baseUrl}\n`);
  return {
    client,
    baseUrl: client.baseUrl,
    logger,
    accountFingerprint: fingerprint(account.apiKey),
    emulator,
    close: once(async () => {
      await client.close();
      await emulator.stop();
    }),
  };
}

function clientExtras(options: OpenServiceOptions, accountFingerprint: string) {
  const gate = options.makeGate ? options.makeGate(accountFingerprint) : options.gate;
  return {
    ...(gate ? { gate } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  };
}

function logFormat(io: CliIo, options: OpenServiceOptions): LogFormat | undefined {
  const value = options.logFormat ?? io.env.IBATCH_LOG_FORMAT;
  if (value === undefined || value === '') return undefined;
  const format = LOG_FORMATS.find((known) => known === value);
  if (format) return format;
  throw new UsageError(`Expected IBATCH_LOG_FORMAT to be pretty or json, got \`${value}\``);
}

function fingerprint(apiKey: string): string {
  return createHash('sha256').update(apiKey).digest('hex').slice(0, 16);
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => {
    done ??= fn();
    return done;
  };
}
