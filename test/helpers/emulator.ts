/** The emulator in this process on a free loopback port, stopped when its test (or file) is done. */
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { defer } from './cleanup.js';

/** Seeded by default (7) so ids and latencies repeat from run to run. */
export async function testEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const em = await startEmulator({ seed: 7, ...options });
  defer(() => em.stop());
  return em;
}

/** Env for a CLI talking to `em` as one of its accounts (JSON logs). */
export function emulatorEnv(em: RunningEmulator, account = 0): NodeJS.ProcessEnv {
  const acc = em.accounts[account];
  if (!acc) throw new Error(`the emulator has no account ${account}`);
  return { IBATCH_BASE_URL: em.baseUrl, IBATCH_API_KEY: acc.apiKey, IBATCH_LOG_FORMAT: 'json' };
}
