/**
 * Drives one selected run: the items it holds (and the paid attempts of items
 * the job file changed since), with every other job item settled for the
 * items that wait on it; then finishes it (status, manifest, report).
 */
import PQueue from 'p-queue';
import { SERVICE_RATE_LIMITS } from '../contract/index.js';
import type { JobItem, LoadedStep } from '../job/index.js';
import {
  type Journal,
  type OutputRecord,
  type RunSpendCap,
  serviceOfRun,
} from '../journal/index.js';
import { ManifestWriter } from '../outputs/index.js';
import { type DesiredState, QuoteCache, releaseLatest } from '../plan/index.js';
import { AssetResolver } from './assets.js';
import { classifyError } from './classify.js';
import { CompletionWatcher } from './completion-watcher.js';
import type { RunContext } from './context.js';
import { trainingItemKey } from './decide/item-identity.js';
import type { RunSelection } from './decide/select-run.js';
import { DownloadStage } from './downloads.js';
import { finishRun, progressSnapshot, snapshotThrottle } from './finish-run.js';
import { type ItemDeps, runGenerationItem } from './generation-item.js';
import { ItemGraph } from './item-graph.js';
import { downloadBacklogBound, ItemWindow, itemWindowBound } from './item-window.js';
import {
  type Driven,
  drivenItems,
  driveSource,
  expandBatch,
  runItemCounts,
  settleSources,
  sourcesOf,
} from './items-to-drive.js';
import { recordJobFacts } from './job-facts.js';
import { parseInferenceTime } from './latency.js';
import { startRunHeartbeat } from './run-heartbeat.js';
import type { Invocation } from './run-job.js';
import { contractDrift, seedRateGate, timelineRecorder, wireStops } from './run-wiring.js';
import { RunStoppedError, StopController } from './stop-control.js';
import { InfluencerResolver } from './trainings.js';
import { RUN_DEFAULTS, type RunEvent, type RunResult } from './types.js';

export interface StartedRun extends Invocation {
  readonly selection: Extract<RunSelection, { kind: 'run' }>;
  readonly outputDir: string;
  /** The run left the folder it recorded (run-folder.ts): its own done files are fetched here too. */
  readonly folderMoved: boolean;
  readonly contracts: Record<string, string>;
  readonly spendCap: RunSpendCap | undefined;
  readonly scope: string;
}

/**
 * Drives the items of a selected, seeded run to the end (or a stop) and
 * finishes it. What only driving needs (the driven items, the graph, the
 * manifest writer's digests, the download stage) lives in `driveItems` and is
 * garbage once it returns: the run-end writing, the run's peak, does not
 * carry it.
 * In the run chain (docs/glossary.md): one selected run, from its context (stop
 * control, rate gate, create queue, progress) to its finish (status,
 * manifest, report). Its own function because `converge` may drive a
 * second run with a fresh context, and finishing must run after
 * `driveItems` let go of what only driving needs.
 */
export async function driveRun(started: StartedRun): Promise<RunResult> {
  const { options, journal, validated, logger, selection, outputDir } = started;
  const { job, catalog } = validated;
  const runId = selection.run.runId;
  let lastSpend = '';
  const emit = (event: RunEvent): void => {
    options.onEvent?.(event);
    // An item's end (its journal state is written before `item-done`) and a
    // pause show at once, not at the next tick: the progress counts match
    // the journal's whenever a person looks (item ends within 250 ms).
    if (event.type === 'item-done' || event.type === 'pause') {
      if (event.type === 'pause') snapshot();
      else itemSnapshots.request();
      return;
    }
    // 'spend' is derived from the progress ticks: one event whenever the journal's totals change.
    if (event.type !== 'progress') return;
    const spend = JSON.stringify(event.snapshot.spend);
    if (spend === lastSpend) return;
    lastSpend = spend;
    options.onEvent?.({ type: 'spend', spend: event.snapshot.spend });
  };
  const snapshot = () => emit({ type: 'progress', snapshot: progressSnapshot(ctx, options.gate) });
  const itemSnapshots = snapshotThrottle(snapshot);
  const speed = SERVICE_RATE_LIMITS.generations.windowMs / options.limits.generations.windowMs;
  const record = timelineRecorder(journal, runId, logger);
  const stop = new StopController();
  const createQueue = new PQueue({
    concurrency: options.createConcurrency ?? RUN_DEFAULTS.createConcurrency,
  });
  const watcher = new CompletionWatcher(options.client, {
    // Once nothing waits to be created (the campaign's tail), polls come every
    // minGapMs while something is overdue: a fraction of a typical model's
    // latency, so a finished item is seen soon without polling in a loop.
    minGapMs: 4000 / speed,
    // While creates flow the request budget (pollsPerCreate) sets the gap;
    // a cap below what the budget gives would only add polls.
    maxGapMs: 30_000 / speed,
    createsWaiting: () => createQueue.size + createQueue.pending > 0,
    ...(options.completeFromHistory === false ? { completeFromHistory: false } : {}),
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
    scope: started.scope,
    outputDir,
    protectedPaths: started.protectedPaths,
    stop,
    ...(started.spendCap ? { spendCap: started.spendCap } : {}),
    ...(options.trainingEstimate !== undefined
      ? { trainingEstimate: options.trainingEstimate }
      : {}),
    watcher,
    quotes: new QuoteCache(options.client, catalog),
    createQueue,
    speed,
    logger,
    ...(options.forgetLost ? { forgetLost: true } : {}),
    emit,
    record,
  };
  const progress = setInterval(snapshot, 1000);
  progress.unref();
  let driven: Driving;
  try {
    driven = await driveItems(started, ctx);
  } finally {
    clearInterval(progress);
    itemSnapshots.cancel();
  }
  // The journal's disk failed: what finishing writes (status, manifest) would
  // fail too or tell the wrong story; the fault is the run's end.
  if (journal.fault) throw journal.fault;
  snapshot();
  if (started.inputFingerprint !== undefined) {
    recordFacts(started, started.inputFingerprint);
  }
  const result = await finishRun({
    journal,
    runId,
    outputDir,
    stop,
    client: options.client,
    logger: ctx.logger,
    downloadFailures: driven.downloadFailures,
    described: selection.state.verdicts,
    localProblem: driven.localProblem,
  });
  const withDone = { ...result, done: driven.done };
  record('run.finished', result.message, undefined, { status: result.status });
  emit({ type: 'run-finished', result: withDone });
  return withDone;
}

/**
 * The job file's facts as the run leaves the job's record (job-facts.ts):
 * what `status` and `report` read instead of expanding an unchanged job.
 */
function recordFacts(started: StartedRun, fingerprint: string): void {
  const { journal, selection, validated } = started;
  const identities = new Map<string, string>();
  for (const item of validated.items.items)
    if (item.identity !== undefined) identities.set(item.key, item.identity);
  recordJobFacts(
    journal,
    selection.run,
    { fingerprint, service: serviceOfRun(selection.run) },
    selection.state.verdicts,
    identities,
    // The run's end, its peak: the records read here hold the items' strings, not copies.
    validated.items.held(),
  );
}

/** What driving leaves for finishing the run. */
interface Driving {
  readonly downloadFailures: number;
  readonly localProblem: string | undefined;
  /** Items of the job done before this run. */
  readonly done: number;
}

/**
 * Drives the run's items and their downloads until all ended or the run stopped.
 * In the run chain (docs/glossary.md): it adds the item graph, the item window, the
 * manifest writer and the download stage. Its own function so that all of
 * them go out of scope before `driveRun` finishes the run: merged, the
 * run-end rewrite would hold every driven item in memory at its peak.
 */
async function driveItems(started: StartedRun, ctx: RunContext): Promise<Driving> {
  const { options, journal, validated, files, selection, contracts } = started;
  const { job, catalog, items } = validated;
  const { runId, record, emit, logger, speed } = ctx;
  if (selection.resumed) {
    for (const message of contractDrift(selection.run.options, contracts)) {
      record('contract.drift', message);
      emit({ type: 'warning', message });
    }
    for (const message of changeMessages(selection)) {
      record('job.changed', message);
      emit({ type: 'warning', message });
    }
  }
  const steps = new Map<string, LoadedStep>(job.steps.map((s) => [s.id, s]));
  const source = driveSource({ journal, runId, items, steps }, selection.state);
  const sources = sourcesOf(items, selection.state);
  const graph = new ItemGraph(sources);
  settleSources(source, selection.state, sources, graph);
  // Files of items done in earlier runs (and in this one, when it moved
  // here from another folder or machine), checked as the run goes: a missing
  // or edited one is fetched again.
  const donePages = outputsOfDoneItems(
    journal,
    selection.state,
    started.folderMoved ? runId : undefined,
  );
  // Nothing reads the decision's latest records from here on.
  releaseLatest(selection.state);
  const { total, ended } = runItemCounts(source);
  let done = 0;
  for (const verdict of selection.state.verdicts.values()) if (verdict === 'done') done += 1;
  const trainingIds = [...job.influencers.keys()].filter((id) =>
    journal.getItem(runId, trainingItemKey(id)),
  );
  record(
    selection.resumed ? 'run.resumed' : 'run.started',
    // A resume names what its run ended before (`done` counts earlier runs' items only).
    `${selection.resumed ? 'resumed' : 'started'} run ${runId} of ${job.name}: ${total} generation item(s)${selection.resumed ? ` (${ended} ended before this start)` : ''}, ${trainingIds.length} influencer(s) to train or reuse; ${done} item(s) done by earlier runs`,
  );
  emit({ type: 'run-started', runId, resumed: selection.resumed, items: total });

  const stopListeners = wireStops(ctx, options, graph);
  const manifest = ManifestWriter.open(ctx.outputDir, ctx.logger);
  // Read while the first creates go out: the first download waits for it.
  manifest.readAhead();
  const downloads = new DownloadStage(
    ctx,
    manifest,
    items.jobItems,
    steps,
    options.downloadConcurrency ?? RUN_DEFAULTS.downloadConcurrency,
    selection.state.verdicts,
  );
  const assets = new AssetResolver(ctx, files);
  const influencers = new InfluencerResolver(ctx, assets, files, started.influencers);
  const deps: ItemDeps = {
    assets,
    influencers,
    graph,
    onOutputs: (item) => downloads.enqueueItem(item),
    expectedLatencyMs: (modelId) => parseInferenceTime(catalog.get(modelId)?.inferenceTime) / speed,
    defaultTimeoutMs: (30 * 60_000) / speed,
  };
  const stopHeartbeat = startRunHeartbeat(ctx, {
    trainings: () => influencers.training,
    downloads: () => downloads.waiting,
    atGate: () => options.gate.snapshot().waiting,
  });
  try {
    await seedRateGate(ctx, options.gate, options.limits);
    downloads.enqueuePending();
    // What a kill left to download does not hold a resume's first creates
    // back (its files wait for the manifest's rows, read meanwhile): the
    // bound counts from it, so what waits stays within it plus this.
    const inherited = downloads.backlog;
    const repair = downloads.verifyAndRepair(donePages);
    const trainings = trainingIds.map((id) =>
      influencers.resolveOrTrain({ jobLocal: id }).catch((error: unknown) => {
        if (!(error instanceof RunStoppedError))
          logger.warn({ influencer: id }, String((error as Error).message));
      }),
    );
    const bound = itemWindowBound(
      options.limits.generations.count,
      options.createConcurrency ?? RUN_DEFAULTS.createConcurrency,
    );
    const backlogBound = downloadBacklogBound(bound) + inherited;
    let behind = false;
    const window = new ItemWindow<Driven>({
      bound,
      drive: ({ item, step }, slot) => runGenerationItem(ctx, deps, step, item, slot),
      blocker: ({ item }) => inputsPending(item, graph, influencers),
      // Items waiting for a training or a source are whole: no more than a batch of them.
      maxWaiting: expandBatch(items.items.length),
      // Downloads that fall behind (a slow disk or file host) hold new items
      // back instead of queueing outputs without end: what was made waits in
      // memory, and what is not made yet costs nothing until there is room.
      held: () => {
        if (downloads.backlog < backlogBound) return false;
        if (!behind) {
          behind = true;
          record(
            'downloads.behind',
            `downloads fall behind the creates: ${downloads.backlog} output(s) wait to be downloaded; new items start as they finish`,
          );
        }
        return true;
      },
    });
    downloads.onRoomBelow(backlogBound, () => window.wake());
    await Promise.all([...trainings, window.run(drivenItems(source)), repair]);
    await downloads.drain();
    logger.debug(
      { event: 'downloads.backlog', peak: downloads.peakBacklog, bound: backlogBound },
      `at most ${downloads.peakBacklog} output(s) waited to be downloaded at once (new items wait from ${backlogBound})`,
    );
  } finally {
    stopHeartbeat();
    ctx.watcher.stop(new RunStoppedError('run finished'));
    stopListeners();
    manifest.close();
  }
  return { downloadFailures: downloads.failures, localProblem: downloads.localProblem, done };
}

/** What `item` waits for before it can be sent: its `from:` source's outcome, its training. */
function inputsPending(
  item: JobItem,
  graph: ItemGraph,
  influencers: InfluencerResolver,
): Promise<unknown> | undefined {
  const source = item.source?.itemKey;
  if (source !== undefined && !graph.isSettled(source)) return graph.outputsOf(source);
  return item.influencer ? influencers.pendingTraining(item.influencer) : undefined;
}

/** What changed in the job file since a resumed run started, by step and field. */
function changeMessages(selection: StartedRun['selection']): string[] {
  if (selection.changes.length === 0) return [];
  const shown = selection.changes.slice(0, 10);
  const more = selection.changes.length - shown.length;
  const lines = [
    `the job file changed since run ${selection.run.runId} started: ${shown.join('; ')}${more > 0 ? `; and ${more} more` : ''}`,
  ];
  if (selection.deferred > 0) {
    lines.push(
      `${selection.deferred} changed item(s) were already sent: they finish as sent, then a new run makes them as the job file now says`,
    );
  }
  return lines;
}

/** Done items whose outputs are read at once (`outputsOfDoneItems`). */
const OUTPUT_PAGE = 1000;

/**
 * The recorded outputs of the job items done in earlier runs (checked, and
 * repaired, by each run), read a page of items at a time as they are asked for.
 * `openRunId`: the resumed run's own items too (its 'open' verdict), ended or not
 * (one not ended has no downloaded output yet). Which items is decided now,
 * from `state.latest`; the pages are read later.
 */
export function outputsOfDoneItems(
  journal: Journal,
  state: DesiredState,
  openRunId?: string,
): Generator<OutputRecord[]> {
  const byRun = new Map<string, string[]>();
  for (const [key, verdict] of state.verdicts) {
    const row = state.latest.get(key);
    if (!row) continue;
    if (verdict !== 'done' && !(verdict === 'open' && row.runId === openRunId)) continue;
    const keys = byRun.get(row.runId) ?? [];
    keys.push(key);
    byRun.set(row.runId, keys);
  }
  return outputPages(journal, byRun);
}

function* outputPages(
  journal: Journal,
  byRun: ReadonlyMap<string, readonly string[]>,
): Generator<OutputRecord[]> {
  for (const [runId, keys] of byRun) {
    for (let at = 0; at < keys.length; at += OUTPUT_PAGE) {
      const page = journal.listOutputsOfItems(runId, keys.slice(at, at + OUTPUT_PAGE));
      if (page.length > 0) yield page;
    }
  }
}
