/**
 * The run benchmark: a 300-generation image campaign on a
 * time-scaled emulator (20 generations per 3 s, latency 8-40 s unscaled),
 * run by ibatch (`runJob`, local gate at the scaled limits, SQLite journal),
 * by ibatch with its journal in PostgreSQL (a loopback server started here,
 * ./postgres.ts, when installed), by ibatch with the history shortcut off
 * (every generation read by id, the history shortcut's baseline) and by the in-repo
 * naive client (4 workers, per-id polling every 2 s scaled), one after the
 * other in the same process, each on a fresh emulator with the same seed.
 * Every figure comes from the emulator's records (see ./helpers.ts); the
 * definitions are in docs/benchmarks.md.
 */
import {
  type CampaignSpec,
  makespanLowerBoundMs,
  measureIbatch,
  measureNaive,
  type SideResult,
} from './helpers.js';
import { withBenchPostgres } from './postgres.js';
import type { Benchmark, BenchRow } from './types.js';

export const CAMPAIGN: CampaignSpec = {
  generations: 300,
  timeScale: 20,
  latencyMs: [8000, 40_000],
  seed: 7,
};

/** The table rows of every side; exported for the test's tiny campaign. */
export function campaignRows(
  spec: CampaignSpec,
  sides: {
    readonly ibatch: SideResult;
    /**
     * ibatch with its journal in PostgreSQL, and where that server was (for
     * the notes); absent when PostgreSQL is not installed.
     */
    readonly postgres?: { readonly side: SideResult; readonly server: string } | undefined;
    /** ibatch with `completeFromHistory: false`. */
    readonly noShortcut: SideResult;
    readonly naive: SideResult;
  },
): BenchRow[] {
  const { ibatch, noShortcut, naive } = sides;
  const postgres = sides.postgres?.side;
  const { oracle: bound, strict } = makespanLowerBoundMs(spec);
  const ratio = (side: SideResult) => side.makespanMs / bound;
  const note = (side: SideResult) =>
    `${side.side}: ${side.charges} charged, ${side.succeeded} succeeded, makespan ${(side.makespanMs / 1000).toFixed(1)} s, wall ${(side.wallMs / 1000).toFixed(1)} s`;
  const requestsNote = (side: SideResult) => {
    const by = side.byEndpoint;
    const reads = (by.getImage ?? 0) + (by.getVideo ?? 0);
    return `${side.requests} requests (emulator count, setup included): ${by.createGeneration ?? 0} creates, ${reads} status reads, ${by.listGenerations ?? 0} history polls`;
  };
  const setup = `N=${spec.generations}, time scale ${spec.timeScale}, latency ${spec.latencyMs[0] / 1000}-${spec.latencyMs[1] / 1000} s unscaled`;
  // ibatch's targets hold on either journal store: the same rows for both.
  const stores = [
    { side: ibatch, suffix: '', setup },
    ...(sides.postgres
      ? [
          {
            side: sides.postgres.side,
            suffix: ', PostgreSQL journal',
            setup: `same emulator settings and seed; journal on ${sides.postgres.server}`,
          },
        ]
      : []),
  ];
  const perStore = (row: (s: (typeof stores)[number]) => BenchRow) => stores.map(row);
  return [
    ...perStore(({ side, suffix, setup }) => ({
      group: 'run',
      metric: `ibatch generation rate / generations limit${suffix}`,
      value: side.rateFraction,
      unit: 'ratio',
      target: '>= 0.95',
      pass: side.rateFraction >= 0.95,
      note: setup,
    })),
    {
      group: 'run',
      metric: 'naive generation rate / generations limit',
      value: naive.rateFraction,
      unit: 'ratio',
      note: 'concurrency 4, per-id poll every 2 s (scaled)',
    },
    ...perStore(({ side, suffix }) => ({
      group: 'run',
      metric: `ibatch requests per created generation${suffix}`,
      value: side.requestsPerGeneration,
      unit: 'req/gen',
      target: '<= 1.5',
      pass: side.requestsPerGeneration <= 1.5,
      note: `history shortcut on; ${requestsNote(side)}`,
    })),
    {
      group: 'run',
      metric: 'ibatch requests per created generation, history shortcut off',
      value: noShortcut.requestsPerGeneration,
      unit: 'req/gen',
      note: `every generation read by id (the watcher before the history shortcut); ${requestsNote(noShortcut)}`,
    },
    {
      group: 'run',
      metric: 'naive requests per created generation',
      value: naive.requestsPerGeneration,
      unit: 'req/gen',
      note: `${naive.requests} requests (emulator count)`,
    },
    ...perStore(({ side, suffix }) => {
      const worstWindow = Math.max(...Object.values(side.windows).map((w) => w.max / w.limit));
      return {
        group: 'run',
        metric: `ibatch 429s received${suffix}`,
        value: side.rateLimited,
        unit: 'count',
        target: '0',
        pass: side.rateLimited === 0,
        note: `${side.earlyRequests} early; busiest window at ${(worstWindow * 100).toFixed(0)}% of its limit`,
      };
    }),
    {
      group: 'run',
      metric: 'ibatch 429s received, history shortcut off',
      value: noShortcut.rateLimited,
      unit: 'count',
      target: '0',
      pass: noShortcut.rateLimited === 0,
      note: `${noShortcut.earlyRequests} early`,
    },
    {
      group: 'run',
      metric: 'naive 429s received',
      value: naive.rateLimited,
      unit: 'count',
      note: `${naive.earlyRequests} early`,
    },
    ...perStore(({ side, suffix }) => ({
      group: 'run',
      metric: `ibatch makespan / lower bound${suffix}`,
      value: ratio(side),
      unit: 'ratio',
      target: '<= 1.05',
      pass: ratio(side) <= 1.05,
      note: `${note(side)}; bound ${(bound / 1000).toFixed(2)} s (strict ${(strict / 1000).toFixed(2)} s: ratio ${(side.makespanMs / strict).toFixed(3)})`,
    })),
    {
      group: 'run',
      metric: 'ibatch makespan / lower bound, history shortcut off',
      value: ratio(noShortcut),
      unit: 'ratio',
      note: note(noShortcut),
    },
    {
      group: 'run',
      metric: 'naive makespan / lower bound',
      value: ratio(naive),
      unit: 'ratio',
      note: note(naive),
    },
    ...(postgres
      ? [
          {
            group: 'run',
            metric: 'ibatch makespan, PostgreSQL / SQLite journal',
            value: postgres.makespanMs / ibatch.makespanMs,
            unit: 'ratio',
            note: 'same campaign, same emulator settings and seed, side by side in this run',
          },
        ]
      : []),
    {
      group: 'run',
      metric: 'ibatch makespan / naive makespan',
      value: ibatch.makespanMs / naive.makespanMs,
      unit: 'ratio',
      note: 'same campaign, same emulator settings and seed',
    },
  ];
}

export const runCampaign: Benchmark = async () => {
  const ibatch = await measureIbatch(CAMPAIGN);
  const onPostgres = await withBenchPostgres('runCampaign', async ({ server, version }) => ({
    side: await measureIbatch(CAMPAIGN, { journal: await server.newSchema() }),
    server: `${version} on loopback (fsync=off)`,
  }));
  const noShortcut = await measureIbatch(CAMPAIGN, { completeFromHistory: false });
  const naive = await measureNaive(CAMPAIGN);
  for (const side of [ibatch, onPostgres?.side, noShortcut, naive]) {
    if (!side) continue;
    if (side.charges !== CAMPAIGN.generations || side.succeeded !== CAMPAIGN.generations) {
      throw new Error(
        `${side.side}: expected ${CAMPAIGN.generations} charged and succeeded, got ${side.charges} / ${side.succeeded}`,
      );
    }
  }
  return campaignRows(CAMPAIGN, { ibatch, postgres: onPostgres, noShortcut, naive });
};
