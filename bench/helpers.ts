/**
 * Measures one side of the run benchmark (ibatch's `runJob`, or the naive
 * client) on its own fresh, time-scaled emulator, from the emulator's own
 * records: the ledger (server-side create times) and `admin.stats()` (request
 * counts per bucket, 429s, requests sent before an announced Retry-After,
 * the most requests accepted in any window). Client-side counters are not
 * trusted for the figures.
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createClient } from '../src/api/index.js';
import {
  BUCKETS,
  type Bucket,
  type RateLimits,
  SERVICE_RATE_LIMITS,
} from '../src/contract/index.js';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';
import { createStreams } from '../src/emulator/prng.js';
import { createLocalGate } from '../src/limits/index.js';
import { runJob } from '../src/scheduler/index.js';
import { runNaiveClient } from './naive-client.js';

export interface CampaignSpec {
  /** Generations in the campaign (one image each, copies 1). */
  readonly generations: number;
  /** Emulator time scale; our limits and the naive poll interval are scaled alike. */
  readonly timeScale: number;
  /** Unscaled latency range of the model on the emulator. */
  readonly latencyMs: readonly [number, number];
  readonly seed: number;
  /** @default 'ideogram-influencer' */
  readonly modelId?: string;
}

export interface SideResult {
  /** `ibatch`, `ibatch, history shortcut off`, `ibatch, PostgreSQL journal` or `naive`. */
  readonly side: string;
  readonly generations: number;
  /** Charges in the ledger (creates the service accepted and billed). */
  readonly charges: number;
  /** Generations the client saw finish successfully. */
  readonly succeeded: number;
  /** Authenticated requests the service accepted (its `requests` bucket). */
  readonly requests: number;
  readonly requestsPerGeneration: number;
  /** 429 answers the service gave this account. */
  readonly rateLimited: number;
  /** Authenticated requests that arrived, by endpoint id (emulator count). */
  readonly byEndpoint: Readonly<Record<string, number>>;
  /** Requests that arrived before an announced Retry-After elapsed. */
  readonly earlyRequests: number;
  /** Per bucket: most requests accepted in any sliding window, and the limit. */
  readonly windows: Readonly<Record<Bucket, { readonly max: number; readonly limit: number }>>;
  /** (ceil(N / C) - 1) windows over the time from first to last create (see rateFraction). */
  readonly rateFraction: number;
  /** First create accepted (server) to last completion seen by the client, ms. */
  readonly makespanMs: number;
  /** The side's whole wall time, setup and (for ibatch) downloads included, ms. */
  readonly wallMs: number;
}

/** Typical latency '~20s', near the middle of the benchmark's 8-40 s spread. */
const DEFAULT_MODEL = 'ideogram-influencer';

/** Our limits, scaled exactly like the emulator's. */
export function scaledLimits(timeScale: number): RateLimits {
  const scaled = {} as Record<Bucket, { count: number; windowMs: number }>;
  for (const bucket of BUCKETS) {
    const window = SERVICE_RATE_LIMITS[bucket];
    scaled[bucket] = { count: window.count, windowMs: window.windowMs / timeScale };
  }
  return scaled;
}

/**
 * Lower bounds of the makespan under the generations limit (C per window W).
 * The k-th create (0-based) cannot be accepted before floor(k / C) windows
 * after the first (by induction on a sliding window), and it then takes its
 * latency L_k. So any client's makespan is at least
 *   oracle = max over k of (floor(k / C) * W + L_k)
 * where L_k is the latency the emulator draws for its k-th create: its seeded
 * latency stream is consumed once per create in arrival order, whoever the
 * client is, so the draws are replayed here. With latencies shorter than a
 * window this is (ceil(N / C) - 1) * W plus the longest latency of the last
 * C creates. `strict` replaces L_k by the model's minimum latency: a bound no
 * latency draw can beat, and out of reach in practice (the last window's
 * slowest generation is near the maximum).
 */
export function makespanLowerBoundMs(spec: CampaignSpec): { oracle: number; strict: number } {
  const { count, windowMs } = scaledLimits(spec.timeScale).generations;
  const [min, max] = spec.latencyMs;
  const strict = (Math.ceil(spec.generations / count) - 1) * windowMs + min / spec.timeScale;
  const latency = createStreams(spec.seed).latency;
  let oracle = 0;
  for (let k = 0; k < spec.generations; k++) {
    const draw = latency.between(min, max) / spec.timeScale;
    oracle = Math.max(oracle, Math.floor(k / count) * windowMs + draw);
  }
  return { oracle, strict };
}

/**
 * Achieved fraction of the generations limit: the least time the limit
 * forces between the first and the last create, (ceil(N / C) - 1) windows,
 * over the time they actually took (server-side accept times). 1 means the
 * creates went exactly as fast as the limit allows; for N a multiple of C it
 * equals the steady create rate after the first burst over C per window.
 */
export function rateFraction(createTimes: readonly number[], limits: RateLimits): number {
  const { count, windowMs } = limits.generations;
  const first = createTimes[0];
  const last = createTimes.at(-1);
  if (first === undefined || last === undefined || createTimes.length <= count || last === first) {
    return Number.NaN;
  }
  return ((Math.ceil(createTimes.length / count) - 1) * windowMs) / (last - first);
}

function prompts(n: number): string[] {
  return Array.from(
    { length: n },
    (_, i) => `Influencer portrait ${i + 1} at golden hour in an editorial style`,
  );
}

async function startSideEmulator(spec: CampaignSpec): Promise<RunningEmulator> {
  return startEmulator({
    port: 0,
    timeScale: spec.timeScale,
    seed: spec.seed,
    latency: { [spec.modelId ?? DEFAULT_MODEL]: [spec.latencyMs[0], spec.latencyMs[1]] },
  });
}

/** An account's emulator stats and the sorted times of its charges at or after `sinceMs`. */
export async function accountFigures(emulator: RunningEmulator, accountId: string, sinceMs = 0) {
  const [stats, ledger] = await Promise.all([
    emulator.admin.stats(),
    emulator.admin.ledger(accountId),
  ]);
  const mine = stats.accounts.find((a) => a.id === accountId);
  if (!mine) throw new Error('the emulator has no stats for the account');
  const createTimes = ledger
    .filter((e) => e.type === 'charge' && Date.parse(e.at) >= sinceMs)
    .map((e) => Date.parse(e.at))
    .sort((a, b) => a - b);
  return { stats: mine, createTimes };
}

async function measure(
  side: SideResult['side'],
  spec: CampaignSpec,
  emulator: RunningEmulator,
  run: (accountApiKey: string) => Promise<{ succeeded: number; doneAt: readonly number[] }>,
): Promise<SideResult> {
  const account = emulator.accounts[0];
  if (!account) throw new Error('the emulator has no account');
  const started = Date.now();
  const { succeeded, doneAt } = await run(account.apiKey);
  const wallMs = Date.now() - started;
  const { stats: mine, createTimes } = await accountFigures(emulator, account.id);
  const windows = {} as Record<Bucket, { max: number; limit: number }>;
  for (const bucket of BUCKETS) {
    windows[bucket] = {
      max: mine.buckets[bucket].maxInAnyWindow,
      limit: mine.buckets[bucket].limit,
    };
  }
  const requests = mine.buckets.requests.total;
  const lastDone = Math.max(...doneAt);
  return {
    side,
    generations: spec.generations,
    charges: createTimes.length,
    succeeded,
    requests,
    requestsPerGeneration: requests / Math.max(1, mine.buckets.generations.total),
    byEndpoint: mine.requestsByEndpoint,
    rateLimited: mine.counters.rateLimited,
    earlyRequests: mine.earlyRequests.length,
    windows,
    rateFraction: rateFraction(createTimes, scaledLimits(spec.timeScale)),
    makespanMs: lastDone - (createTimes[0] ?? lastDone),
    wallMs,
  };
}

/**
 * ibatch: `runJob` on a job file of N prompts, with a local gate at the scaled
 * limits; `completeFromHistory: false` reads every generation by id (the
 * watcher before the history shortcut), the baseline of the history shortcut; `journal`
 * puts the journal in PostgreSQL instead of a SQLite file.
 */
export async function measureIbatch(
  spec: CampaignSpec,
  options: {
    readonly completeFromHistory?: boolean;
    /** A PostgreSQL journal's URL (the side is named for it). @default journal.db in the temp dir */
    readonly journal?: string;
  } = {},
): Promise<SideResult> {
  const shortcut = options.completeFromHistory !== false;
  const modelId = spec.modelId ?? DEFAULT_MODEL;
  const dir = await mkdtemp(path.join(tmpdir(), 'ibatch-bench-run-'));
  const emulator = await startSideEmulator(spec);
  try {
    const jobPath = path.join(dir, 'campaign.yaml');
    await writeFile(
      path.join(dir, 'prompts.csv'),
      `prompt\n${prompts(spec.generations).join('\n')}\n`,
    );
    await writeFile(
      jobPath,
      [
        'version: 1',
        'name: bench-campaign',
        'output: ./out',
        'generations:',
        '  - id: portraits',
        `    model: ${modelId}`,
        '    rows: prompts.csv',
        '    input:',
        '      prompt: "{{ prompt }}"',
        '',
      ].join('\n'),
    );
    const side = [
      'ibatch',
      ...(shortcut ? [] : ['history shortcut off']),
      ...(options.journal ? ['PostgreSQL journal'] : []),
    ].join(', ');
    return await measure(side, spec, emulator, async (apiKey) => {
      const limits = scaledLimits(spec.timeScale);
      const gate = createLocalGate(limits);
      const client = createClient({ baseUrl: emulator.baseUrl, apiKey, gate });
      const doneAt: number[] = [];
      try {
        const result = await runJob({
          jobPath,
          client,
          gate,
          limits,
          accountFingerprint: createHash('sha256').update(apiKey).digest('hex').slice(0, 16),
          journalPath: options.journal ?? path.join(dir, 'journal.db'),
          completeFromHistory: shortcut,
          onEvent: (event) => {
            if (event.type === 'item-done') doneAt.push(Date.now());
          },
        });
        if (result.exitCode !== 0) throw new Error(`ibatch run failed: ${result.message}`);
        return { succeeded: result.counts.succeeded, doneAt };
      } finally {
        gate.close();
        await client.close();
      }
    });
  } finally {
    await emulator.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The naive client: 4 workers, each polling its own generation every 2 s (scaled). */
export async function measureNaive(spec: CampaignSpec): Promise<SideResult> {
  const emulator = await startSideEmulator(spec);
  try {
    return await measure('naive', spec, emulator, async (apiKey) => {
      const result = await runNaiveClient({
        baseUrl: emulator.baseUrl,
        apiKey,
        modelId: spec.modelId ?? DEFAULT_MODEL,
        kind: 'image',
        prompts: prompts(spec.generations),
        concurrency: 4,
        pollMs: 2000 / spec.timeScale,
      });
      return { succeeded: result.succeeded, doneAt: result.doneAt };
    });
  } finally {
    await emulator.stop();
  }
}
