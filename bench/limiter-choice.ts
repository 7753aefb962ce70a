/**
 * limiterChoice: the evidence behind "bottleneck is a devDependency". One
 * time-scaled emulator account is saturated twice, once through bottleneck's
 * reservoir limiter configured to the account's documented generations limit
 * and once through our local gate, with the same client, retry policy and
 * creates. Between the two the emulator's windows and stats are reset, so each
 * side starts on an idle account.
 *
 * Per side: 429s the service answered (its stats), the achieved fraction of
 * the limit (its ledger's create times), and the most grants the limiter
 * itself let through in any sliding window (the service refuses the excess,
 * so its own accepted maximum never passes the limit: the 429s show it).
 */
import Bottleneck from 'bottleneck';
import { createClient } from '../src/api/index.js';
import { startEmulator } from '../src/emulator/index.js';
import { createLocalGate } from '../src/limits/index.js';
import type { RequestGate } from '../src/shared/index.js';
import { accountFigures, rateFraction, scaledLimits } from './helpers.js';
import { maxInWindow } from './limiter.js';
import type { Benchmark, BenchRow } from './types.js';

/** A 60 s window becomes 3 s: ~12 s of creates per side. */
const TIME_SCALE = 20;
/** Five windows' worth of the generations limit (20 per window). */
const CREATES = 100;
const MODEL = 'sdxl-lite';

interface Side {
  readonly name: 'bottleneck' | 'ibatch';
  /** The gate in front of the client, and a way to stop its timers. */
  make(onGrant: (at: number) => void): { gate: RequestGate; close(): Promise<void> };
}

const limits = scaledLimits(TIME_SCALE);
const { count, windowMs } = limits.generations;

const SIDES: readonly Side[] = [
  {
    name: 'bottleneck',
    make(onGrant) {
      // The reservoir recipe of bottleneck's README for "N per interval",
      // its heartbeat scaled like the window.
      const limiter = new Bottleneck({
        reservoir: count,
        reservoirRefreshAmount: count,
        reservoirRefreshInterval: windowMs,
        heartbeatInterval: 250 / TIME_SCALE,
      });
      return {
        gate: {
          // Each create (and each retry of one) takes a reservoir unit; a
          // reservoir cannot hear the service's 429s or Remaining headers.
          acquire: () => limiter.schedule(async () => onGrant(Date.now())),
          feedback: () => {},
        },
        close: () => limiter.stop(),
      };
    },
  },
  {
    name: 'ibatch',
    make(onGrant) {
      const gate = createLocalGate(limits);
      gate.on('grant', (event) => {
        if (event.buckets.includes('generations')) onGrant(event.at);
      });
      return {
        gate,
        close: async () => gate.close(),
      };
    },
  },
];

interface SideResult {
  readonly name: Side['name'];
  readonly rateLimited: number;
  readonly fraction: number;
  readonly maxGrants: number;
  readonly failed: number;
}

export const limiterChoice: Benchmark = async () => {
  const emulator = await startEmulator({ port: 0, timeScale: TIME_SCALE, seed: 11 });
  const results: SideResult[] = [];
  try {
    const account = emulator.accounts[0];
    if (!account) throw new Error('the emulator has no account');
    for (const side of SIDES) {
      await emulator.admin.reset();
      await emulator.admin.setCredits(account.id, 1_000_000);
      const grants: number[] = [];
      const { gate, close } = side.make((at) => grants.push(at));
      const client = createClient({ baseUrl: emulator.baseUrl, apiKey: account.apiKey, gate });
      const startedAt = Date.now();
      let failed = 0;
      try {
        await Promise.all(
          Array.from({ length: CREATES }, (_, i) =>
            client
              .createGeneration(MODEL, { input: { prompt: `limiter choice ${side.name} ${i}` } })
              .catch(() => {
                failed += 1;
              }),
          ),
        );
      } finally {
        await close();
        await client.close();
      }
      const { stats: mine, createTimes } = await accountFigures(emulator, account.id, startedAt);
      grants.sort((a, b) => a - b);
      results.push({
        name: side.name,
        rateLimited: mine.counters.rateLimited,
        fraction: rateFraction(createTimes, limits),
        maxGrants: maxInWindow(grants, windowMs),
        failed,
      });
    }
  } finally {
    await emulator.stop();
  }
  return results.flatMap(rowsOf);
};

function rowsOf(result: SideResult): BenchRow[] {
  const ours = result.name === 'ibatch';
  const note = `${CREATES} creates at once, ${count}/${windowMs}ms (time scale ${TIME_SCALE}), ${result.failed} failed after retries`;
  return [
    {
      group: 'limiterChoice',
      metric: `${result.name}: 429s from the service`,
      value: result.rateLimited,
      unit: '429s',
      ...(ours ? { target: '0', pass: result.rateLimited === 0 } : {}),
      note,
    },
    {
      group: 'limiterChoice',
      metric: `${result.name}: achieved fraction of the generations limit`,
      value: result.fraction,
      unit: 'ratio',
      ...(ours ? { target: '>= 0.9', pass: result.fraction >= 0.9 } : {}),
      note,
    },
    {
      group: 'limiterChoice',
      metric: `${result.name}: most grants in any sliding window`,
      value: result.maxGrants,
      unit: 'grants',
      ...(ours ? { target: `<= ${count}`, pass: result.maxGrants <= count } : {}),
      note,
    },
  ];
}
