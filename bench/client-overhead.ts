/**
 * Client overhead on loopback: `getAccount()` through the full client (gate,
 * retry loop, capped body read, zod parse) against the emulator with limits
 * raised, versus a raw undici loop (same pool size, same concurrency, JSON
 * parse only) in the same run. Rounds alternate so drift hits both sides.
 */
import { Pool } from 'undici';
import { createClient } from '../src/api/index.js';
import { startEmulator } from '../src/emulator/index.js';
import type { Benchmark, BenchRow } from './types.js';

const CONCURRENCY = 8;
const ROUND_MS = 1500;
const ROUNDS = 3;
const UNLIMITED = { count: 1_000_000_000, windowMs: 60_000 };

async function loop(durationMs: number, once: () => Promise<unknown>): Promise<number> {
  const end = Date.now() + durationMs;
  let done = 0;
  const worker = async () => {
    while (Date.now() < end) {
      await once();
      done++;
    }
  };
  const started = Date.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return (done * 1000) / (Date.now() - started);
}

export const clientOverhead: Benchmark = async () => {
  const emulator = await startEmulator({
    port: 0,
    rateLimits: {
      requests: UNLIMITED,
      generations: UNLIMITED,
      trainings: UNLIMITED,
      uploads: UNLIMITED,
    },
  });
  const account = emulator.accounts[0];
  if (!account) throw new Error('emulator has no account');
  const client = createClient({
    baseUrl: emulator.baseUrl,
    apiKey: account.apiKey,
    connections: CONCURRENCY,
  });
  const url = new URL(emulator.baseUrl);
  const pool = new Pool(url.origin, { connections: CONCURRENCY });
  const rawOnce = async () => {
    const response = await pool.request({
      path: `${url.pathname}/account`,
      method: 'GET',
      headers: { authorization: `Bearer ${account.apiKey}`, accept: 'application/json' },
    });
    return response.body.json();
  };
  try {
    // Warm both paths (connections, JIT) before measuring.
    await loop(300, rawOnce);
    await loop(300, () => client.getAccount());
    let raw = 0;
    let through = 0;
    for (let i = 0; i < ROUNDS; i++) {
      raw += await loop(ROUND_MS, rawOnce);
      through += await loop(ROUND_MS, () => client.getAccount());
    }
    raw /= ROUNDS;
    through /= ROUNDS;
    const ratio = through / raw;
    const note = `concurrency ${CONCURRENCY}, ${ROUNDS} alternating rounds of ${ROUND_MS} ms`;
    const rows: BenchRow[] = [
      {
        group: 'client',
        metric: 'getAccount requests/s through the client',
        value: through,
        unit: 'req/s',
        note,
      },
      {
        group: 'client',
        metric: 'GET /account requests/s, raw undici loop',
        value: raw,
        unit: 'req/s',
        note,
      },
      {
        group: 'client',
        metric: 'client / raw throughput',
        value: ratio,
        unit: 'ratio',
        target: '>= 0.8',
        pass: ratio >= 0.8,
      },
    ];
    return rows;
  } finally {
    await client.close();
    await pool.close();
    await emulator.stop();
  }
};
