/**
 * Fair sharing between runners, with full `ibatch run` processes (the built
 * CLI) on ONE emulator account through ONE real redis-server: equal jobs
 * started together finish together, a small job started beside a big one
 * gets its share at once, and the account is used to its limit without a
 * 429 or a window over its limit (the emulator's admin figures judge).
 */
import path from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { accountFingerprint } from '../../src/shared/index.js';
import { emulatorEnv, scaledLimits, spawnCli, testEmulator, until } from '../helpers/index.js';
import { imageJob, type Workspace, workspace } from '../scheduler/helpers.js';
import { keyPrefix, testRedis, testStore } from './redis-helpers.js';

/**
 * 60 s windows become 2.5 s: 20 creates per 2.5 s for the whole account. The
 * slack every slot needs (margin, a request's round trip) is a few % of that.
 */
const SCALE = 24;
const W = SERVICE_RATE_LIMITS.generations.windowMs / SCALE;
const GENERATIONS = SERVICE_RATE_LIMITS.generations.count;
const REPETITIONS = 5;

interface Started {
  readonly ws: Workspace;
  readonly name: string;
  readonly run: ReturnType<typeof spawnCli>;
  /** Resolves to the ms from the common start to the process's exit, and its exit code. */
  readonly finished: Promise<{ at: number; code: number | null; stderr: string }>;
}

function startRun(
  em: RunningEmulator,
  account: number,
  redisUrl: string,
  job: { name: string; n: number; share?: number },
  t0: number,
): Started {
  const ws = workspace(imageJob({ name: job.name, n: job.n, prompt: `${job.name} scene` }));
  const env = {
    ...emulatorEnv(em, account),
    IBATCH_LIMITS: scaledLimits(SCALE),
    IBATCH_REDIS_URL: redisUrl,
  };
  const share = job.share === undefined ? [] : ['--share', String(job.share)];
  const run = spawnCli(['run', ws.jobPath, ...share], { env, cwd: ws.dir });
  const finished = run.exited.then(({ code, stderr }) => ({ at: Date.now() - t0, code, stderr }));
  return { ws, name: job.name, run, finished };
}

/**
 * Starts runs that begin sending together: the account's shared pause (what a
 * 429 sets) holds every runner's first request until all of them are up and
 * waiting, then lets them go at one instant of the Redis server's clock. How
 * long each process takes to start (seconds apart on a busy machine) is then
 * no part of what they get.
 */
async function startTogether(
  em: RunningEmulator,
  account: number,
  redisUrl: string,
  start: () => Started[],
): Promise<Started[]> {
  const accountKey = accountFingerprint(em.accounts[account]!.apiKey);
  const store = await testStore({ url: redisUrl, accountKey, limits: {}, runner: 'starter' });
  const redis = new Redis(redisUrl);
  try {
    // Held a little past each check, so the pause never ends before all are waiting.
    const hold = () => store.pause({ afterMs: W });
    await hold();
    const runs = start();
    const runners = `${keyPrefix(redisUrl, accountKey)}runners`;
    await until(
      async () => {
        await hold();
        return (await redis.zcard(runners)) >= runs.length;
      },
      { timeoutMs: 60_000, everyMs: 100, what: 'every runner to wait at the shared gate' },
    );
    return runs;
  } finally {
    redis.disconnect();
  }
}

/** The account's create times (ms epoch), from its charges in the emulator's ledger. */
async function createTimes(em: RunningEmulator, account: number, job?: string): Promise<number[]> {
  const id = em.accounts[account]!.id;
  return (await em.admin.ledger(id))
    .filter(
      (e) =>
        e.type === 'charge' && (job === undefined || e.idempotencyKey?.startsWith(`ib1-${job}-`)),
    )
    .map((e) => Date.parse(e.at))
    .sort((a, b) => a - b);
}

/**
 * The share of the generations limit reached while saturated: in a full
 * sliding log each create reuses the slot of the create GENERATIONS before
 * it, so W over the mean reuse gap is the fraction of the limit in use.
 */
function utilisation(times: readonly number[]): { gaps: number; ratio: number } {
  const gaps = times.slice(GENERATIONS).map((t, i) => t - times[i]!);
  const mean = gaps.reduce((sum, gap) => sum + gap, 0) / gaps.length;
  return { gaps: gaps.length, ratio: W / mean };
}

async function expectWithinLimits(em: RunningEmulator, account: number): Promise<void> {
  const id = em.accounts[account]!.id;
  const stats = (await em.admin.stats()).accounts.find((a) => a.id === id)!;
  expect(stats.counters.rateLimited).toBe(0);
  for (const [bucket, window] of Object.entries(SERVICE_RATE_LIMITS)) {
    const seen = stats.buckets[bucket as keyof typeof stats.buckets];
    expect(seen.maxInAnyWindow, bucket).toBeLessThanOrEqual(window.count);
  }
}

/** The run's own start and end in its journal (ms epoch). */
async function runSpan(ws: Workspace): Promise<{ createdAt: number; finishedAt: number }> {
  const journal = await openJournal(ws.journalPath, { readonly: true });
  try {
    const [run] = journal.listRuns();
    if (!run?.finishedAt) throw new Error(`no finished run in ${path.basename(ws.dir)}`);
    return { createdAt: run.createdAt, finishedAt: run.finishedAt };
  } finally {
    journal.close();
  }
}

describe('fair sharing between runners (ibatch run processes, one Redis)', () => {
  it('three equal jobs started together finish within 1.25x of each other, 5 times, at >= 0.95 of the limit in one of them', async () => {
    const redis = await testRedis();
    // One account per repetition: each starts on an empty window, the worst case
    // for a runner that starts a moment before the others.
    const em = await testEmulator({
      timeScale: SCALE,
      accounts: Array.from({ length: REPETITIONS }, () => ({ credits: 1_000_000 })),
    });
    const spreads: number[] = [];
    const times: number[][] = [];
    for (let rep = 0; rep < REPETITIONS; rep += 1) {
      const t0 = Date.now();
      const runs = await startTogether(em, rep, redis.url, () =>
        [0, 1, 2].map((i) => startRun(em, rep, redis.url, { name: `fair-${rep}-${i}`, n: 30 }, t0)),
      );
      const exits = await Promise.all(runs.map((r) => r.finished));
      for (const exit of exits) expect(exit.code, exit.stderr).toBe(0);
      const finished = exits.map((exit) => exit.at);
      spreads.push(Math.max(...finished) / Math.min(...finished));
      times.push(finished);
      await expectWithinLimits(em, rep);
      expect(await createTimes(em, rep)).toHaveLength(90);
    }
    const reached = await Promise.all(
      Array.from({ length: REPETITIONS }, async (_, rep) =>
        utilisation(await createTimes(em, rep)),
      ),
    );
    const context = JSON.stringify({ times, spreads, reached });
    for (const spread of spreads) expect(spread, context).toBeLessThanOrEqual(1.25);
    // A freed slot is taken when a waiting runner's timer fires and it calls
    // Redis, so a repetition on a machine whose cores are busy elsewhere leaves
    // slots free a while: the limit is judged on the best repetition (a gate
    // that leaves the account under-used does so in every one). The absolute
    // rates are `npm run bench`'s.
    const best = Math.max(...reached.map((r) => r.ratio));
    expect(best, context).toBeGreaterThanOrEqual(0.95);
  }, 120_000);

  it('a 10-item job started while a 200-item job runs gets its share at once', async () => {
    const redis = await testRedis();
    const em = await testEmulator({ timeScale: SCALE, accounts: [{ credits: 1_000_000 }] });
    const t0 = Date.now();
    const big = startRun(em, 0, redis.url, { name: 'big', n: 200 }, t0);
    // Past the first window's free slots: the big job holds the whole account.
    await until(async () => (await createTimes(em, 0)).length >= 2 * GENERATIONS, {
      timeoutMs: 30_000,
      what: 'the big job to saturate the account',
    });
    const small = startRun(em, 0, redis.url, { name: 'small', n: 10 }, Date.now());
    const smallExit = await small.finished;
    expect(smallExit.code, smallExit.stderr).toBe(0);
    big.run.child.kill('SIGINT');
    expect((await big.finished).code).toBe(130);
    // Counted in creates side by side, never in wall time: how fast a run
    // starts up, sends and finishes is the machine's CPU, not the share.
    const { createdAt } = await runSpan(small.ws);
    const smalls = await createTimes(em, 0, 'small');
    const bigs = await createTimes(em, 0, 'big');
    const first = smalls[0]!;
    const last = smalls.at(-1)!;
    const bigBeforeFirst = bigs.filter((t) => t >= createdAt && t < first).length;
    const bigAlongside = bigs.filter((t) => t >= first && t <= last).length;
    const context = JSON.stringify({ bigBeforeFirst, bigAlongside, smalls: smalls.length });
    expect(smalls).toHaveLength(10);
    // At once: before its first create the big job gets no more than the
    // slots that free while the small run starts up (a window at most); a
    // newcomer queued behind the big job's share would see more go first.
    expect(bigBeforeFirst, context).toBeLessThanOrEqual(GENERATIONS);
    // Its share: at least half of the account's creates while it makes its own.
    expect(bigAlongside, context).toBeLessThanOrEqual(smalls.length);
    await expectWithinLimits(em, 0);
  }, 90_000);

  it('a runner with --share 2 gets about twice the creates of a share-1 runner while both run', async () => {
    const redis = await testRedis();
    const em = await testEmulator({ timeScale: SCALE, accounts: [{ credits: 1_000_000 }] });
    const t0 = Date.now();
    const [double, single] = await startTogether(em, 0, redis.url, () => [
      startRun(em, 0, redis.url, { name: 'double', n: 40, share: 2 }, t0),
      startRun(em, 0, redis.url, { name: 'single', n: 40 }, t0),
    ]);
    if (!double || !single) throw new Error('two runs started');
    for (const exit of await Promise.all([double.finished, single.finished])) {
      expect(exit.code, exit.stderr).toBe(0);
    }
    const doubles = await createTimes(em, 0, 'double');
    const last = doubles.at(-1)!;
    const singles = (await createTimes(em, 0, 'single')).filter((t) => t <= last);
    const context = JSON.stringify({ doubles: doubles.length, singles: singles.length });
    expect(doubles.length).toBe(40);
    // Equal shares would give 1; twice the weight, 2 (tags advance half as fast).
    expect(doubles.length / singles.length, context).toBeGreaterThanOrEqual(1.6);
    expect(doubles.length / singles.length, context).toBeLessThanOrEqual(2.5);
    await expectWithinLimits(em, 0);
  }, 60_000);
});
