/**
 * A tiny version of the run benchmark: checks that the measurement code gives
 * sane numbers from the emulator's records, and the correctness half of the
 * benchmark's claims: ibatch alone on the account gets no 429, sends nothing
 * before a Retry-After and never exceeds any bucket's window (the emulator's
 * own sliding-window maximum). No timing assertion beyond "not below the
 * lower bound", which only a wrong measurement could break. With
 * PostgreSQL installed, the same for ibatch with its journal there, and the
 * table gives it every target row SQLite's side has.
 */
import { describe, expect, it } from 'vitest';
import {
  type CampaignSpec,
  makespanLowerBoundMs,
  measureIbatch,
  measureNaive,
  scaledLimits,
} from '../../bench/helpers.js';
import { runNaiveClient } from '../../bench/naive-client.js';
import { campaignRows } from '../../bench/run-campaign.js';
import { testEmulator } from '../helpers/index.js';
import { postgresMissing, startPostgres } from '../helpers/postgres.js';

const TINY: CampaignSpec = {
  generations: 30,
  timeScale: 60,
  latencyMs: [8000, 40_000],
  seed: 11,
};

describe('run benchmark on a tiny campaign', () => {
  it('measures ibatch and the naive client from the emulator records', async () => {
    const ibatch = await measureIbatch(TINY);
    const noShortcut = await measureIbatch(TINY, { completeFromHistory: false });
    const naive = await measureNaive(TINY);

    for (const side of [ibatch, noShortcut, naive]) {
      // Every item charged exactly once (idempotent creates) and seen finished.
      expect(side.charges).toBe(TINY.generations);
      expect(side.succeeded).toBe(TINY.generations);
      // A create retried after a timeout on a loaded machine is a second request, not a second charge.
      expect(side.byEndpoint.createGeneration).toBeGreaterThanOrEqual(TINY.generations);
      expect(side.makespanMs).toBeGreaterThanOrEqual(makespanLowerBoundMs(TINY).oracle - 5);
      expect(side.wallMs).toBeGreaterThanOrEqual(side.makespanMs);
    }
    // Reading each generation by id costs one create and one read per generation at the least.
    for (const side of [noShortcut, naive]) {
      expect(side.byEndpoint.getImage).toBeGreaterThanOrEqual(TINY.generations);
      expect(side.requestsPerGeneration).toBeGreaterThanOrEqual(2);
    }
    // The history shortcut: single-copy images complete from the shared
    // history polls, no read by id, and the same campaign needs fewer requests.
    expect(ibatch.byEndpoint.getImage ?? 0).toBe(0);
    expect(ibatch.requestsPerGeneration).toBeLessThan(noShortcut.requestsPerGeneration - 0.5);
    expect(noShortcut.rateLimited).toBe(0);

    // ibatch alone on the account: no 429, nothing early, no window overrun.
    expect(ibatch.rateLimited).toBe(0);
    expect(ibatch.earlyRequests).toBe(0);
    for (const [bucket, window] of Object.entries(ibatch.windows)) {
      expect(window.max, bucket).toBeLessThanOrEqual(window.limit);
    }
    // It did use the generations limit (the campaign is bound by it), not a trickle.
    expect(ibatch.windows.generations.max).toBeGreaterThan(
      scaledLimits(TINY.timeScale).generations.count / 2,
    );
    // The gate may not pass the limit's rate; it must come near it.
    expect(ibatch.rateFraction).toBeGreaterThan(0.5);
    expect(ibatch.rateFraction).toBeLessThanOrEqual(1.02);
    // Shared history polls: far fewer requests than per-id polling.
    expect(ibatch.requestsPerGeneration).toBeLessThan(naive.requestsPerGeneration);

    const rows = campaignRows(TINY, { ibatch, noShortcut, naive });
    expect(rows.every((r) => r.group === 'run' && Number.isFinite(r.value))).toBe(true);
    expect(rows.find((r) => r.metric === 'ibatch 429s received')?.pass).toBe(true);
  }, 90_000);

  it.skipIf(postgresMissing)(
    `measures ibatch with its journal in PostgreSQL beside SQLite${postgresMissing ? ` (skipped: ${postgresMissing})` : ''}`,
    async () => {
      const server = await startPostgres();
      const ibatch = await measureIbatch(TINY);
      const journal = await server.newSchema();
      const onPostgres = await measureIbatch(TINY, { journal });
      // The journal did live in PostgreSQL: the run is there.
      const schema = new URL(journal).searchParams.get('schema');
      const runs = await server.query<{ items: number }>(
        `SELECT count(*)::int AS items FROM ${schema}.items`,
      );
      expect(runs[0]?.items).toBe(TINY.generations);
      expect(onPostgres.side).toBe('ibatch, PostgreSQL journal');
      expect(onPostgres.charges).toBe(TINY.generations);
      expect(onPostgres.succeeded).toBe(TINY.generations);
      expect(onPostgres.rateLimited).toBe(0);
      expect(onPostgres.earlyRequests).toBe(0);
      expect(onPostgres.makespanMs).toBeGreaterThanOrEqual(makespanLowerBoundMs(TINY).oracle - 5);

      const noShortcut = await measureIbatch(TINY, { completeFromHistory: false });
      const naive = await measureNaive(TINY);
      const rows = campaignRows(TINY, {
        ibatch,
        postgres: { side: onPostgres, server: 'the test server' },
        noShortcut,
        naive,
      });
      // Every target row of ibatch has its PostgreSQL twin, with the same target.
      const targeted = rows.filter((r) => r.metric.startsWith('ibatch') && r.target !== undefined);
      for (const row of targeted.filter((r) => !r.metric.includes(','))) {
        const twin = rows.find((r) => r.metric === `${row.metric}, PostgreSQL journal`);
        expect(twin?.target, row.metric).toBe(row.target);
        expect(typeof twin?.pass, row.metric).toBe('boolean');
      }
      expect(rows.find((r) => r.metric === 'ibatch 429s received, PostgreSQL journal')?.pass).toBe(
        true,
      );
    },
    120_000,
  );

  it('the naive client retries a 429 and keeps one charge per item', async () => {
    const emulator = await testEmulator({
      timeScale: 60,
      seed: 3,
      latency: { 'flux-portrait': [2000, 4000] },
    });
    const account = emulator.accounts[0];
    if (!account) throw new Error('no account');
    await emulator.admin.scriptFaults([
      { endpoint: 'createGeneration', fault: 'rate-limit-burst', times: 3 },
    ]);
    const result = await runNaiveClient({
      baseUrl: emulator.baseUrl,
      apiKey: account.apiKey,
      modelId: 'flux-portrait',
      kind: 'image',
      prompts: ['a', 'b', 'c', 'd', 'e'],
      pollMs: 2000 / 60,
    });
    expect(result.succeeded).toBe(5);
    expect(result.rateLimited).toBeGreaterThanOrEqual(3);
    // (Its other workers do not pause when one is told to wait: the baseline
    // sends early requests, which the benchmark reports beside ibatch's 0.)
    const charges = (await emulator.admin.ledger(account.id)).filter((e) => e.type === 'charge');
    expect(charges).toHaveLength(5);
  });
});
