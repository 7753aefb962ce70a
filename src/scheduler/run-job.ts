/**
 * `runJob`: validates the job, opens the journal, picks or resumes the run and
 * drives every item concurrently; the rate gate, the create queue and the
 * budget decide what actually goes out. Ends by rewriting the manifest and the
 * report from the journal, whatever stopped the run.
 */
import { setMaxListeners } from 'node:events';
import path from 'node:path';
import PQueue from 'p-queue';
import {
  type Bucket,
  LONGEST_RETRY_AFTER_MS,
  type RateLimits,
  SERVICE_RATE_LIMITS,
} from '../contract/index.js';
import {
  defaultJournalPath,
  type JobItem,
  jobInputPaths,
  type LoadedStep,
  type ModelCatalog,
  validateJob,
} from '../job/index.js';
import { type Journal, journalFiles, openJournal } from '../journal/index.js';
import type { RateGate } from '../limits/index.js';
import { ManifestWriter } from '../outputs/index.js';
import { QuoteCache } from '../plan/index.js';
import { contentHash, silentLogger } from '../shared/index.js';
import { AssetResolver, prepareJobFiles } from './assets.js';
import { classifyError } from './classify.js';
import { CompletionWatcher } from './completion-watcher.js';
import type { RunContext } from './context.js';
import { DownloadStage } from './downloads.js';
import { finishRun, progressSnapshot, recordEscapedStop } from './finish-run.js';
import { type ItemDeps, runGenerationItem } from './generation-item.js';
import { ItemGraph } from './item-graph.js';
import { parseInferenceTime } from './latency.js';
import { assertRunId } from './run-id.js';
import { markRunning, type RunSelection, seedItems, selectRun, toNewItem } from './select-run.js';
import { RunStoppedError, StopController } from './stop-control.js';
import { InfluencerResolver, trainingItems } from './trainings.js';
import type { RunEvent, RunJobOptions, RunResult } from './types.js';

export async function runJob(options: RunJobOptions): Promise<RunResult> {
  const logger = options.logger ?? silentLogger();
  const { client } = options;
  if (options.runId !== undefined) assertRunId(options.runId);
  // Everything that can reject the job happens before the journal opens:
  // a bad job file or a bad local file spends nothing and leaves no run behind.
  const validated = await validateJob(options.jobPath, {
    lister: client,
    baseUrl: client.baseUrl,
    offline: options.offline ?? false,
    ...(options.journalPath ? { journalPath: options.journalPath } : {}),
    ...(options.outDir ? { outDir: path.resolve(options.outDir) } : {}),
    ...(options.jobLimits ? { limits: options.jobLimits } : {}),
  });
  const { job, items } = validated;
  for (const warning of validated.warnings) logger.warn({ path: warning.path }, warning.message);
  const files = await prepareJobFiles(job, items);
  const journalPath = options.journalPath ?? defaultJournalPath(job.dir);
  // The lock is the job's: other jobs may share the journal meanwhile.
  const journal = await openJournal(journalPath, {
    job: job.name,
    wait: options.waitForLock ?? false,
    ...(options.signal ? { signal: options.signal } : {}),
    onLockWait: (holder) =>
      logger.info(
        { pid: holder?.pid, hostname: holder?.hostname },
        `waiting for ${holder ? `process ${holder.pid} on ${holder.hostname}` : 'another process'} to release the journal`,
      ),
  });
  try {
    const protectedPaths = [
      ...journalFiles(journalPath),
      ...jobInputPaths(job),
      ...files.byPath.keys(),
    ];
    return await runWithJournal(options, journal, validated, files, logger, protectedPaths);
  } finally {
    journal.close();
  }
}

async function runWithJournal(
  options: RunJobOptions,
  journal: Journal,
  validated: Awaited<ReturnType<typeof validateJob>>,
  files: Awaited<ReturnType<typeof prepareJobFiles>>,
  logger: NonNullable<RunJobOptions['logger']>,
  protectedPaths: readonly string[],
): Promise<RunResult> {
  const { job, catalog, items } = validated;
  const outputDir = options.outDir ? path.resolve(options.outDir) : job.output;
  const contracts = contractHashes(catalog, items);
  const selection = selectRun(journal, job, {
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    newRun: options.newRun ?? false,
    snapshot: { service: options.client.baseUrl, outputDir, limits: options.limits, contracts },
  });
  const runId = selection.run.runId;
  if (selection.alreadyFinished) {
    return finishRun({
      journal,
      runId,
      outputDir,
      stop: new StopController(),
      client: options.client,
      alreadyFinished: true,
      downloadFailures: 0,
    });
  }
  seedItems(
    journal,
    runId,
    [...trainingItems(job.influencers.values()), ...items.map(toNewItem)],
    selection.resumed,
  );
  markRunning(journal, runId);
  try {
    return await driveRun({
      options,
      journal,
      validated,
      files,
      logger,
      selection,
      outputDir,
      contracts,
      protectedPaths,
    });
  } catch (error) {
    recordEscapedStop(journal, runId, error, logger);
    throw error;
  }
}

interface StartedRun {
  readonly options: RunJobOptions;
  readonly journal: Journal;
  readonly validated: Awaited<ReturnType<typeof validateJob>>;
  readonly files: Awaited<ReturnType<typeof prepareJobFiles>>;
  readonly logger: NonNullable<RunJobOptions['logger']>;
  readonly selection: RunSelection;
  readonly outputDir: string;
  readonly contracts: Record<string, string>;
  readonly protectedPaths: readonly string[];
}

/** Drives the items of a selected, seeded run to the end (or a stop) and finishes it. */
async function driveRun(started: StartedRun): Promise<RunResult> {
  const { options, journal, validated, files, logger, selection, outputDir, contracts } = started;
  const { protectedPaths } = started;
  const { job, catalog, items } = validated;
  const runId = selection.run.runId;
  let lastSpend = '';
  const emit = (event: RunEvent) => {
    options.onEvent?.(event);
    // 'spend' is derived from the progress ticks: one event whenever the journal's totals change.
    if (event.type !== 'progress') return;
    const spend = JSON.stringify(event.snapshot.spend);
    if (spend === lastSpend) return;
    lastSpend = spend;
    options.onEvent?.({ type: 'spend', spend: event.snapshot.spend });
  };
  const speed = SERVICE_RATE_LIMITS.generations.windowMs / options.limits.generations.windowMs;
  const record: RunContext['record'] = (type, message, itemKey, data) => {
    journal.appendEvent(runId, {
      type,
      message,
      itemKey: itemKey ?? null,
      ...(data ? { data } : {}),
    });
    logger.info({ event: type, ...(itemKey ? { item: itemKey } : {}) }, message);
  };
  const stop = new StopController();
  const createQueue = new PQueue({ concurrency: options.createConcurrency ?? 4 });
  const watcher = new CompletionWatcher(options.client, {
    // Once nothing waits to be created (the campaign's tail), polls come every
    // minGapMs while something is overdue: L/5 for a ~20 s model (measured).
    minGapMs: 4000 / speed,
    // While creates flow the request budget (pollsPerCreate) sets the gap,
    // about 25 s at 20 creates a minute; a shorter cap would only add polls.
    maxGapMs: 30_000 / speed,
    createsWaiting: () => createQueue.size + createQueue.pending > 0,
    // A poll that keeps failing for a reason that stops the run (revoked key,
    // service unreachable after the client's retries) must stop it, not hang it.
    onError: (error) => {
      const verdict = classifyError(error, stop.hardStop.signal);
      if (verdict.kind === 'stop' && !(error instanceof RunStoppedError)) {
        stop.stop(verdict.reason, verdict.message);
      } else logger.debug({ err: String(error) }, 'poll failed; retrying later');
    },
  });
  const ctx: RunContext = {
    runId,
    job,
    catalog,
    journal,
    client: options.client,
    scope: `${options.client.baseUrl}#${options.accountFingerprint}`,
    outputDir,
    protectedPaths,
    stop,
    watcher,
    quotes: new QuoteCache(options.client, catalog),
    createQueue,
    speed,
    logger,
    emit,
    record,
  };
  if (selection.resumed) {
    for (const message of contractDrift(selection.run.options, contracts)) {
      record('contract.drift', message);
      emit({ type: 'warning', message });
    }
  }
  record(
    selection.resumed ? 'run.resumed' : 'run.started',
    `${selection.resumed ? 'resumed' : 'started'} run ${runId} of ${job.name} (${items.length} generation items, ${job.influencers.size} training(s))`,
  );
  emit({ type: 'run-started', runId, resumed: selection.resumed, items: items.length });

  const graph = new ItemGraph();
  const stopListeners = wireStops(ctx, options, graph);
  const manifest = ManifestWriter.open(outputDir);
  const steps = new Map<string, LoadedStep>(job.steps.map((s) => [s.id, s]));
  const byKey = new Map<string, JobItem>(items.map((i) => [i.key, i]));
  const downloads = new DownloadStage(
    ctx,
    manifest,
    byKey,
    steps,
    options.downloadConcurrency ?? 4,
  );
  const assets = new AssetResolver(ctx, files);
  const influencers = new InfluencerResolver(ctx, assets, files);
  const deps: ItemDeps = {
    assets,
    influencers,
    graph,
    onOutputs: (key) => downloads.enqueueItem(key),
    expectedLatencyMs: (modelId) => parseInferenceTime(catalog.get(modelId)?.inferenceTime) / speed,
    defaultTimeoutMs: (30 * 60_000) / speed,
  };
  const progress = setInterval(
    () => emit({ type: 'progress', snapshot: progressSnapshot(ctx, options.gate) }),
    1000,
  );
  progress.unref();
  try {
    await seedRateGate(ctx, options.gate, options.limits);
    downloads.enqueuePending();
    const trainings = [...job.influencers.keys()].map((id) =>
      influencers.resolveOrTrain({ jobLocal: id }).catch((error: unknown) => {
        if (!(error instanceof RunStoppedError))
          logger.warn({ influencer: id }, String((error as Error).message));
      }),
    );
    await Promise.all([
      ...trainings,
      ...items.map((item) => {
        const step = steps.get(item.stepId);
        return step ? runGenerationItem(ctx, deps, step, item) : Promise.resolve();
      }),
    ]);
    await downloads.drain();
  } finally {
    clearInterval(progress);
    watcher.stop(new RunStoppedError('run finished'));
    stopListeners();
    manifest.close();
  }
  emit({ type: 'progress', snapshot: progressSnapshot(ctx, options.gate) });
  const result = await finishRun({
    journal,
    runId,
    outputDir,
    stop,
    client: options.client,
    alreadyFinished: false,
    downloadFailures: downloads.failures,
  });
  record('run.finished', result.message);
  emit({ type: 'run-finished', result });
  return result;
}

/**
 * A restarted runner starts with an empty gate, but the service still counts
 * what the killed process sent: without seeding, the first burst after a
 * restart runs into a 429. Creates are in the journal (their 202 times, and
 * intents still unanswered); everything else shows in the
 * `X-RateLimit-Remaining` of one cheap first request.
 */
async function seedRateGate(ctx: RunContext, gate: RateGate, limits: RateLimits): Promise<void> {
  const now = Date.now();
  const expiries = (bucket: Bucket, kinds: (kind: string) => boolean) => {
    const { windowMs } = limits[bucket];
    const margin = Math.max(25, windowMs * 0.01);
    return (
      ctx.journal
        .recentCreates(now - windowMs - margin)
        .filter((create) => kinds(create.kind))
        // Counted by the service when it arrived: at the latest its 202, or
        // (unanswered) any moment up to now.
        .map((create) => (create.sentBy ?? now) + windowMs + margin)
    );
  };
  gate.occupy(
    'generations',
    expiries('generations', (kind) => kind !== 'training'),
  );
  gate.occupy(
    'trainings',
    expiries('trainings', (kind) => kind === 'training'),
  );
  gate.occupy(
    'requests',
    expiries('requests', () => true),
  );
  const account = await ctx.client.getAccount({ signal: ctx.stop.hardStop.signal });
  ctx.logger.info({ credits: account.credits }, `balance: ${account.credits} credits`);
}

/** A hash of each model contract the job uses, to notice a contract change on resume. */
function contractHashes(catalog: ModelCatalog, items: readonly JobItem[]): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const modelId of new Set(items.map((i) => i.modelId))) {
    const model = catalog.get(modelId);
    if (model) hashes[modelId] = contentHash(model.fields);
  }
  return hashes;
}

function contractDrift(snapshot: unknown, now: Record<string, string>): string[] {
  const before = (snapshot as { contracts?: Record<string, string> } | null)?.contracts ?? {};
  return Object.entries(now)
    .filter(([modelId, hash]) => before[modelId] !== undefined && before[modelId] !== hash)
    .map(
      ([modelId]) =>
        `the contract of model ${modelId} changed since this run started; pending items are sent as validated now`,
    );
}

/** Connects signals, the gate's pauses and the stop controller; returns a disposer. */
function wireStops(ctx: RunContext, options: RunJobOptions, graph: ItemGraph): () => void {
  const { stop, journal, runId } = ctx;
  const onAbort = () => stop.stop('interrupted', 'interrupted by a signal');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  stop.onStop((reason) => {
    ctx.record('run.stopping', `stopping: ${stop.message}`, undefined, { reason });
    graph.abandon(new RunStoppedError(stop.message));
  });
  // Every in-flight request listens on this signal: hundreds is normal here.
  setMaxListeners(0, stop.hardStop.signal);
  stop.hardStop.signal.addEventListener(
    'abort',
    () => ctx.watcher.stop(new RunStoppedError(stop.message)),
    { once: true },
  );
  const persisted = journal.getRun(runId)?.notBefore;
  if (persisted && persisted > Date.now()) {
    // A wait beyond the ceiling (persisted by an older ibatch) is not obeyed
    // forever: forget it, the first request asks the service again.
    if (persisted - Date.now() > LONGEST_RETRY_AFTER_MS) journal.setRunNotBefore(runId, null);
    else options.gate.pauseUntil(persisted);
  }
  const offPause = options.gate.on('pause', ({ until }) => {
    journal.setRunNotBefore(runId, until);
    ctx.emit({ type: 'pause', until });
    ctx.record('rate.paused', `rate limited: waiting until ${new Date(until).toISOString()}`);
  });
  const offResume = options.gate.on('resume', () => journal.setRunNotBefore(runId, null));
  return () => {
    options.signal?.removeEventListener('abort', onAbort);
    offPause();
    offResume();
  };
}
