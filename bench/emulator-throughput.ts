/** Requests/s of `GET /account` on the emulator over keep-alive (undici Pool), rate limits raised. */
import { Pool } from 'undici';
import { startEmulator } from '../src/emulator/index.js';
import type { Benchmark } from './types.js';

const DURATION_MS = 5000;
const CONCURRENCY = 32;

export const emulatorThroughput: Benchmark = async () => {
  const em = await startEmulator({
    seed: 1,
    rateLimits: { requests: { count: 100_000_000, windowMs: 60_000 } },
  });
  const origin = new URL(em.baseUrl).origin;
  const pool = new Pool(origin, { connections: 8, pipelining: 1 });
  const headers = { authorization: `Bearer ${em.accounts[0]?.apiKey ?? ''}` };
  let done = 0;
  let failed = 0;
  const deadline = Date.now() + DURATION_MS;
  const started = Date.now();
  const worker = async () => {
    while (Date.now() < deadline) {
      const res = await pool.request({ origin, path: '/api/v1/account', method: 'GET', headers });
      await res.body.text();
      if (res.statusCode === 200) done++;
      else failed++;
    }
  };
  try {
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  } finally {
    await pool.close();
    await em.stop();
  }
  const perSecond = Math.round(done / ((Date.now() - started) / 1000));
  return [
    {
      group: 'emulator',
      metric: 'GET /account requests/s (keep-alive, 8 connections)',
      value: perSecond,
      unit: 'req/s',
      target: '>= 2000',
      pass: perSecond >= 2000 && failed === 0,
      note: failed ? `${failed} non-200 answers` : 'client and server share the 2 cores',
    },
  ];
};
