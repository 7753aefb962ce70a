/** Starts the real emulator and a client for its first account; both closed after the test (or file). */
import { Writable } from 'node:stream';
import {
  type ClientEvent,
  type ClientOptions,
  createClient,
  type ServiceClient,
} from '../../../src/api/index.js';
import type { EmulatorOptions, RunningEmulator } from '../../../src/emulator/index.js';
import { createLogger } from '../../../src/shared/index.js';
import { defer, testEmulator } from '../../helpers/index.js';

export interface EmulatorClient {
  readonly emulator: RunningEmulator;
  readonly client: ServiceClient;
  readonly apiKey: string;
  readonly accountId: string;
  readonly events: ClientEvent[];
  /** Every log line the client wrote (debug level, JSON). */
  readonly logLines: string[];
}

export async function startEmulatorClient(
  emulatorOptions: EmulatorOptions = {},
  clientOptions: Partial<ClientOptions> = {},
): Promise<EmulatorClient> {
  const emulator = await testEmulator({ seed: 7, timeScale: 100, ...emulatorOptions });
  const account = emulator.accounts[0];
  if (!account) throw new Error('emulator started without accounts');
  const events: ClientEvent[] = [];
  const logLines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logLines.push(chunk.toString('utf8'));
      done();
    },
  });
  const client = createClient({
    baseUrl: emulator.baseUrl,
    apiKey: account.apiKey,
    logger: createLogger({ level: 'debug', format: 'json', destination: sink }),
    onEvent: (event) => events.push(event),
    retry: { baseDelayMs: 10, maxDelayMs: 50 },
    ...clientOptions,
  });
  // Registered after the emulator's stop, so it runs first (cleanups unwind as a stack).
  defer(() => client.close());
  return {
    emulator,
    client,
    apiKey: account.apiKey,
    accountId: account.id,
    events,
    logLines,
  };
}
