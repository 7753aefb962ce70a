/**
 * The journaled spend protocol (src/scheduler/journaled-attempt.ts) against
 * the real emulator over loopback HTTP and a real journal file: the intent is
 * committed before the create leaves, a resume re-sends the same key and
 * body, the budget refuses before anything is reserved or sent, a refused
 * create gives its reservation back, and both trainings and generations go
 * through it inside the create queue.
 */
import { join } from 'node:path';
import PQueue from 'p-queue';
import { describe, expect, it } from 'vitest';
import type { GenerationRequest } from '../../src/contract/index.js';
import { type JobItem, validateJob } from '../../src/job/index.js';
import { idempotencyKey, type Journal, openJournal } from '../../src/journal/index.js';
import { QuoteCache } from '../../src/plan/index.js';
import { AssetResolver } from '../../src/scheduler/assets.js';
import { CompletionWatcher } from '../../src/scheduler/completion-watcher.js';
import type { RunContext } from '../../src/scheduler/context.js';
import { prepareJobFiles } from '../../src/scheduler/decide/input-files.js';
import {
  TRAINING_STEP,
  trainingItemKey,
  trainingItems,
} from '../../src/scheduler/decide/item-identity.js';
import { PlanItems } from '../../src/scheduler/decide/plan-items.js';
import { selectRun } from '../../src/scheduler/decide/select-run.js';
import { type ItemDeps, runGenerationItem } from '../../src/scheduler/generation-item.js';
import { ItemGraph } from '../../src/scheduler/item-graph.js';
import {
  type CreateAnswer,
  type PaidCreate,
  runJournaledAttempt,
} from '../../src/scheduler/journaled-attempt.js';
import { StopController } from '../../src/scheduler/stop-control.js';
import { InfluencerResolver } from '../../src/scheduler/trainings.js';
import { silentLogger } from '../../src/shared/index.js';
import { type EmulatorClient, startEmulatorClient } from '../api/helpers/emulator-client.js';
import { defer, tempDir, until } from '../helpers/index.js';
import { makeWorkspace } from './fixtures/pipeline/helpers.js';

const SPEED = 100;
const TRAINING = trainingItemKey('mia');

interface Harness {
  readonly ctx: RunContext;
  readonly journal: Journal;
  readonly deps: ItemDeps;
  /** The first item of the `photos` step. */
  readonly photo: JobItem;
  /** The key the attempt `attempt` of `itemKey` in `stepId` must carry. */
  keyOf(stepId: string, itemKey: string, attempt: number): string;
  readonly em: EmulatorClient;
  readonly queue: PQueue;
  /** The ledger's charges, by idempotency key. */
  charges(): Promise<Map<string, number>>;
  /** A fresh context on the same run (what the next process would build). */
  resumed(): RunContext;
}

/**
 * The pipeline fixture (upload set -> training of `mia`, photos) without the
 * influencer on the photos, seeded into a new run as `runJob` seeds it. The
 * emulator, client, journal, watchers and temp folder go after the test.
 */
async function harness(options: { budget?: number } = {}): Promise<Harness> {
  const em = await startEmulatorClient({ timeScale: SPEED });
  const dir = tempDir('sched');
  const jobPath = makeWorkspace(dir, 'job.yaml', {
    '    influencer: mia\n': '',
    ...(options.budget === undefined
      ? {}
      : { 'output: out\n': `output: out\nbudget: ${options.budget}\n` }),
  });
  const { client } = em;
  const validated = await validateJob(jobPath, {
    lister: client,
    baseUrl: client.baseUrl,
    offline: false,
  });
  const { job, catalog, items } = validated;
  const files = await prepareJobFiles(job, items);
  const journal = await openJournal(join(dir, 'journal.db'));
  defer(() => journal.close());
  const planItems = PlanItems.of(job, catalog, items);
  planItems.identify(files);
  const selection = selectRun(journal, job, planItems, {
    fresh: true,
    settledRuns: new Set(),
    snapshot: { service: client.baseUrl, scope: `${client.baseUrl}#test` },
    trainings: () => trainingItems(job.influencers.values()),
  });
  if (selection.kind !== 'run') throw new Error('expected a new run');
  const { run } = selection;
  const queue = new PQueue({ concurrency: 2 });
  const context = (): RunContext => {
    const watcher = new CompletionWatcher(client, { minGapMs: 20, maxGapMs: 200 });
    defer(() => watcher.stop(new Error('test over')));
    return {
      runId: run.runId,
      job,
      catalog,
      journal,
      client,
      scope: `${client.baseUrl}#test`,
      outputDir: join(dir, 'out'),
      protectedPaths: [],
      stop: new StopController(),
      watcher,
      quotes: new QuoteCache(client, catalog),
      createQueue: queue,
      speed: SPEED,
      logger: silentLogger(),
      emit: () => undefined,
      record: (type, message, itemKey) =>
        journal.appendEvent(run.runId, { type, message, itemKey: itemKey ?? null }),
    };
  };
  const photo = items.find((i) => i.stepId === 'photos');
  if (!photo) throw new Error('the fixture has no photos item');
  const ctx = context();
  const assets = new AssetResolver(ctx, files);
  const deps: ItemDeps = {
    assets,
    influencers: new InfluencerResolver(ctx, assets, files),
    graph: new ItemGraph(new Set()),
    onOutputs: () => undefined,
    expectedLatencyMs: () => 200,
    defaultTimeoutMs: 60_000,
  };
  return {
    ctx,
    journal,
    deps,
    photo,
    keyOf: (stepId, itemKey, attempt) =>
      idempotencyKey({ jobName: job.name, runId: run.runId, stepId, itemKey, attempt }),
    em,
    queue,
    charges: async () => {
      const byKey = new Map<string, number>();
      for (const e of await em.emulator.admin.ledger(em.accountId)) {
        if (e.type !== 'charge') continue;
        byKey.set(e.idempotencyKey ?? '', (byKey.get(e.idempotencyKey ?? '') ?? 0) + 1);
      }
      return byKey;
    },
    resumed: context,
  };
}

/** A generation create that records what it was asked to send. */
function generationCreate(
  ctx: RunContext,
  itemKey: string,
  sent: Array<{ key: string; body: unknown }>,
  after?: () => void,
): PaidCreate<GenerationRequest, CreateAnswer> {
  return {
    kind: 'generation',
    itemKey,
    send: async (body, key, signal) => {
      sent.push({ key, body });
      const created = await ctx.client.createGeneration('flux-portrait', body, {
        idempotencyKey: key,
        signal,
      });
      after?.();
      return {
        chargedCost: created.creditsCost,
        httpStatus: created.httpStatus,
        remote: { generationIds: created.ids },
      };
    },
  };
}

function photoBody(h: Harness): GenerationRequest {
  return h.journal.getItem(h.ctx.runId, h.photo.key)?.request as GenerationRequest;
}

describe('runJournaledAttempt', () => {
  it('commits the intent and its reservation before the create is sent', async () => {
    const h = await harness();
    const body = photoBody(h);
    const quotedCost = await h.ctx.quotes.quote('flux-portrait', body, h.ctx.stop.hardStop.signal);
    let seenAtSend: unknown;
    const create = generationCreate(h.ctx, h.photo.key, []);
    const submitted = await runJournaledAttempt(
      h.ctx,
      {
        ...create,
        send: (b, key, signal) => {
          seenAtSend = {
            attempt: h.journal.getOpenAttempt(h.ctx.runId, h.photo.key),
            item: h.journal.getItem(h.ctx.runId, h.photo.key),
            key,
          };
          return create.send(b, key, signal);
        },
      },
      { body, quotedCost },
    );
    expect(seenAtSend).toMatchObject({
      attempt: { state: 'intent', attemptNo: 1, request: body, quotedCost },
      item: { state: 'submitting', attemptsUsed: 1, reservedCredits: quotedCost },
    });
    const { key } = seenAtSend as { key: string };
    expect(key).toBe(
      (seenAtSend as { attempt: { idempotencyKey: string } }).attempt.idempotencyKey,
    );
    expect(key).toBe(h.keyOf('photos', h.photo.key, 1));
    expect(submitted?.attempt).toMatchObject({ state: 'submitted', idempotencyKey: key });
    expect(submitted?.attempt.generationIds.length).toBeGreaterThan(0);
    expect(h.journal.getItem(h.ctx.runId, h.photo.key)).toMatchObject({
      state: 'submitted',
      reservedCredits: 0,
      chargedCredits: quotedCost,
    });
    expect(await h.charges()).toEqual(new Map([[key, 1]]));
  });

  it('re-sends an open intent with its key and body on resume; the service charges once', async () => {
    const h = await harness();
    const body = photoBody(h);
    const sent: Array<{ key: string; body: unknown }> = [];
    // The create reaches the service, then the answer is lost (the process died).
    const lost = generationCreate(h.ctx, h.photo.key, sent, () => {
      throw new Error('socket hang up');
    });
    await expect(runJournaledAttempt(h.ctx, lost, { body, quotedCost: null })).rejects.toThrow(
      'socket hang up',
    );
    const openAttempt = h.journal.getOpenAttempt(h.ctx.runId, h.photo.key);
    expect(openAttempt).toMatchObject({ state: 'intent', attemptNo: 1 });

    const next = h.resumed();
    const again = await runJournaledAttempt(next, generationCreate(next, h.photo.key, sent), {
      open: openAttempt!,
    });
    expect(sent).toHaveLength(2);
    expect(sent[1]).toEqual(sent[0]);
    expect(sent[1]?.key).toBe(openAttempt?.idempotencyKey);
    expect(again?.attempt).toMatchObject({ state: 'submitted', attemptNo: 1 });
    expect(h.journal.listAttempts(h.ctx.runId, h.photo.key)).toHaveLength(1);
    expect(await h.charges()).toEqual(new Map([[openAttempt?.idempotencyKey, 1]]));
  });

  it('over the budget: reserves nothing, sends nothing and stops the run with credits', async () => {
    const h = await harness({ budget: 1 });
    const sent: Array<{ key: string; body: unknown }> = [];
    const result = await runJournaledAttempt(h.ctx, generationCreate(h.ctx, h.photo.key, sent), {
      body: photoBody(h),
      quotedCost: 5,
    });
    expect(result).toBeUndefined();
    expect(sent).toEqual([]);
    expect(h.ctx.stop.reason).toBe('credits');
    expect(h.ctx.stop.message).toBe(
      "budget reached: 0 of the job's 1 credits committed over its runs, 1 left, the next generation needs 5",
    );
    expect(h.journal.listAttempts(h.ctx.runId, h.photo.key)).toEqual([]);
    expect(h.journal.getItem(h.ctx.runId, h.photo.key)).toMatchObject({
      state: 'pending',
      attemptsUsed: 0,
      reservedCredits: 0,
    });
    expect(await h.charges()).toEqual(new Map());
  });

  it('a create the service refuses is recorded rejected and gives its reservation back', async () => {
    const h = await harness();
    const sent: Array<{ key: string; body: unknown }> = [];
    // A body the model's contract refuses (no prompt): a 4xx, nothing charged.
    const refused = { ...photoBody(h), input: {} } as GenerationRequest;
    await expect(
      runJournaledAttempt(h.ctx, generationCreate(h.ctx, h.photo.key, sent), {
        body: refused,
        quotedCost: 4,
      }),
    ).rejects.toMatchObject({ status: expect.any(Number) });
    expect(sent).toHaveLength(1);
    const [attempt] = h.journal.listAttempts(h.ctx.runId, h.photo.key);
    expect(attempt?.state).toBe('rejected');
    expect(attempt?.httpStatus).toBeGreaterThanOrEqual(400);
    expect(attempt?.httpStatus).toBeLessThan(500);
    expect(h.journal.getItem(h.ctx.runId, h.photo.key)).toMatchObject({
      state: 'failed',
      reservedCredits: 0,
      chargedCredits: 0,
    });
    expect(h.ctx.stop.mayCreate).toBe(true);
    expect(await h.charges()).toEqual(new Map());
  });

  it('a training and a generation both spend through it, inside the create queue', async () => {
    const h = await harness();
    h.queue.pause();
    const step = h.ctx.job.steps.find((s) => s.id === 'photos');
    expect(step).toBeDefined();
    const training = h.deps.influencers.resolveOrTrain({ jobLocal: 'mia' });
    // Outside a run's item window: a slot that is always free.
    const slot = { leave: () => undefined, enter: () => Promise.resolve() };
    const generation = runGenerationItem(h.ctx, h.deps, step!, h.photo, slot);
    // Both are waiting for a create slot: no intent, no key, no charge yet.
    await until(() => h.queue.size === 2, { timeoutMs: 20_000, what: 'both creates queued' });
    expect(h.journal.listAttempts(h.ctx.runId, TRAINING)).toEqual([]);
    expect(h.journal.listAttempts(h.ctx.runId, h.photo.key)).toEqual([]);
    expect(await h.charges()).toEqual(new Map());

    h.queue.start();
    const influencerId = await training;
    await generation;
    const [trained] = h.journal.listAttempts(h.ctx.runId, TRAINING);
    expect(trained).toMatchObject({ state: 'succeeded', influencerId, generationIds: [] });
    expect(trained?.trainingId).toBeTruthy();
    expect(trained?.idempotencyKey).toBe(h.keyOf(TRAINING_STEP, TRAINING, 1));
    const [generated] = h.journal.listAttempts(h.ctx.runId, h.photo.key);
    expect(generated).toMatchObject({ state: 'succeeded', trainingId: null, influencerId: null });
    expect(generated?.generationIds.length).toBeGreaterThan(0);
    expect(await h.charges()).toEqual(
      new Map([
        [trained?.idempotencyKey, 1],
        [generated?.idempotencyKey, 1],
      ]),
    );
  });
});
