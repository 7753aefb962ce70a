/**
 * The run benchmark (issue 5): a 300-generation image campaign on a
 * time-scaled emulator (20 generations per 3 s, latency 8-40 s unscaled),
 * run by ibatch (`runJob`, local gate at the scaled limits), by ibatch with
 * the history shortcut off (every generation read by id, issue 17.3's
 * baseline) and by the in-repo naive client (4 workers, per-id polling every
 * 2 s scaled), one after the other in the same process, each on a fresh
 * emulator with the same seed.
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
import type { Benchmark, BenchRow } from './types.js';

export const CAMPAIGN: CampaignSpec = {
  generations: 300,
  timeScale: 20,
  latencyMs: [8000, 40_000],
  seed: 7,
};

/** The table rows of both sides; exported for the test's tiny campaign. */
export function campaignRows(
  spec: CampaignSpec,
  sides: {
    readonly ibatch: SideResult;
    /** ibatch with `completeFromHistory: false`. */
    readonly noShortcut: SideResult;
    readonly naive: SideResult;
  },
): BenchRow[] {
  const { ibatch, noShortcut, naive } = sides;
  const { oracle: bound, strict } = makespanLowerBoundMs(spec);
  const ratio = (side: SideResult) => side.makespanMs / bound;
  const worstWindow = Math.max(...Object.values(ibatch.windows).map((w) => w.max / w.limit));
  const note = (side: SideResult) =>
    `${side.side}: ${side.charges} charged, ${side.succeeded} succeeded, makespan ${(side.makespanMs / 1000).toFixed(1)} s, wall ${(side.wallMs / 1000).toFixed(1)} s`;
  const requestsNote = (side: SideResult) => {
    const by = side.byEndpoint;
    const reads = (by.getImage ?? 0) + (by.getVideo ?? 0);
    return `${side.requests} requests (emulator count, setup included): ${by.createGeneration ?? 0} creates, ${reads} status reads, ${by.listGenerations ?? 0} history polls`;
  };
  const setup = `N=${spec.generations}, time scale ${spec.timeScale}, latency ${spec.latencyMs[0] / 1000}-${spec.latencyMs[1] / 1000} s unscaled`;
  return [
    {
      group: 'run',
      metric: 'ibatch generation rate / generations limit',
      value: ibatch.rateFraction,
      unit: 'ratio',
      target: '>= 0.95',
      pass: ibatch.rateFraction >= 0.95,
      note: setup,
    },
    {
      group: 'run',
      metric: 'naive generation rate / generations limit',
      value: naive.rateFraction,
      unit: 'ratio',
      note: 'concurrency 4, per-id poll every 2 s (scaled)',
    },
    {
      group: 'run',
      metric: 'ibatch requests per created generation',
      value: ibatch.requestsPerGeneration,
      unit: 'req/gen',
      target: '<= 1.5',
      pass: ibatch.requestsPerGeneration <= 1.5,
      note: `history shortcut on; ${requestsNote(ibatch)}`,
    },
    {
      group: 'run',
      metric: 'ibatch requests per created generation, history shortcut off',
      value: noShortcut.requestsPerGeneration,
      unit: 'req/gen',
      note: `every generation read by id (the watcher before issue 17.3); ${requestsNote(noShortcut)}`,
    },
    {
      group: 'run',
      metric: 'naive requests per created generation',
      value: naive.requestsPerGeneration,
      unit: 'req/gen',
      note: `${naive.requests} requests (emulator count)`,
    },
    {
      group: 'run',
      metric: 'ibatch 429s received',
      value: ibatch.rateLimited,
      unit: 'count',
      target: '0',
      pass: ibatch.rateLimited === 0,
      note: `${ibatch.earlyRequests} early; busiest window at ${(worstWindow * 100).toFixed(0)}% of its limit`,
    },
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
    {
      group: 'run',
      metric: 'ibatch makespan / lower bound',
      value: ratio(ibatch),
      unit: 'ratio',
      target: '<= 1.05',
      pass: ratio(ibatch) <= 1.05,
      note: `${note(ibatch)}; bound ${(bound / 1000).toFixed(2)} s (strict ${(strict / 1000).toFixed(2)} s: ratio ${(ibatch.makespanMs / strict).toFixed(3)})`,
    },
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
  const noShortcut = await measureIbatch(CAMPAIGN, { completeFromHistory: false });
  const naive = await measureNaive(CAMPAIGN);
  for (const side of [ibatch, noShortcut, naive]) {
    if (side.charges !== CAMPAIGN.generations || side.succeeded !== CAMPAIGN.generations) {
      throw new Error(
        `${side.side}: expected ${CAMPAIGN.generations} charged and succeeded, got ${side.charges} / ${side.succeeded}`,
      );
    }
  }
  return campaignRows(CAMPAIGN, { ibatch, noShortcut, naive });
};
