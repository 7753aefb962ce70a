/**
 * What a run sets up around its items: the rate gate seeded with what a killed
 * process had sent, the model contracts it was validated against, and the
 * wiring of signals, pauses and stops.
 */
import { setMaxListeners } from 'node:events';
import { type Bucket, LONGEST_RETRY_AFTER_MS, type RateLimits } from '../contract/index.js';
import type { ModelCatalog } from '../job/index.js';
import {
  type Journal,
  JournalWriteError,
  type RecentCreate,
  RUN_STATUS,
} from '../journal/index.js';
import type { RateGate } from '../limits/index.js';
import type { Logger } from '../shared/index.js';
import { contentHash } from '../shared/index.js';
import type { RunContext } from './context.js';
import type { ItemGraph } from './item-graph.js';
import { RunStoppedError } from './stop-control.js';
import type { RunJobOptions } from './types.js';

/**
 * A restarted runner starts with an empty gate, but the service still counts
 * what the killed process sent: without seeding, the first burst after a
 * restart runs into a 429. Creates are in the journal (their 202 times, and
 * intents still unanswered); everything else shows in the
 * `X-RateLimit-Remaining` of one cheap first request.
 */
export async function seedRateGate(
  ctx: RunContext,
  gate: RateGate,
  limits: RateLimits,
): Promise<void> {
  const now = Date.now();
  const since =
    now - Math.max(...SEEDED_BUCKETS.map((bucket) => limits[bucket].windowMs)) * 1.01 - 25;
  const held = placesStillCounted(ctx.journal.recentCreates(since), limits, now);
  for (const bucket of SEEDED_BUCKETS) gate.occupy(bucket, held[bucket]);
  const account = await ctx.client.getAccount({ signal: ctx.stop.hardStop.signal });
  ctx.logger.info({ credits: account.credits }, `balance: ${account.credits} credits`);
}

const SEEDED_BUCKETS = ['generations', 'trainings', 'requests'] as const;

/**
 * Until when each create the service may still count holds a place in each
 * bucket's window: from when the service counted it (at the latest its 202,
 * or, unanswered, any moment up to now) plus the window and a margin. A
 * create recorded after `now` was recorded before the clock was set back:
 * it counts as sent now, or it would hold its place for as long as the
 * clock went back.
 */
export function placesStillCounted(
  creates: readonly RecentCreate[],
  limits: RateLimits,
  now: number,
): Record<(typeof SEEDED_BUCKETS)[number], number[]> {
  const held = (bucket: Bucket, counts: (kind: string) => boolean) => {
    const { windowMs } = limits[bucket];
    const margin = Math.max(25, windowMs * 0.01);
    return creates
      .filter((create) => counts(create.kind))
      .map((create) => Math.min(create.sentBy ?? now, now) + windowMs + margin)
      .filter((until) => until > now);
  };
  return {
    generations: held('generations', (kind) => kind !== 'training'),
    trainings: held('trainings', (kind) => kind === 'training'),
    requests: held('requests', () => true),
  };
}

/** A hash of each model contract the job uses, to notice a contract change on resume. */
export function contractHashes(
  catalog: ModelCatalog,
  modelIds: Iterable<string>,
): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const modelId of modelIds) {
    const model = catalog.get(modelId);
    if (model) hashes[modelId] = contentHash(model.fields);
  }
  return hashes;
}

export function contractDrift(snapshot: unknown, now: Record<string, string>): string[] {
  const before = (snapshot as { contracts?: Record<string, string> } | null)?.contracts ?? {};
  return Object.entries(now)
    .filter(([modelId, hash]) => before[modelId] !== undefined && before[modelId] !== hash)
    .map(
      ([modelId]) =>
        `the contract of model ${modelId} changed since this run started; pending items are sent as validated now`,
    );
}

/** Connects signals, the gate's pauses and the stop controller; returns a disposer. */
export function wireStops(ctx: RunContext, options: RunJobOptions, graph: ItemGraph): () => void {
  const { stop, journal, runId } = ctx;
  const onAbort = () => stop.stop('interrupted', 'interrupted by a signal');
  options.signal?.addEventListener('abort', onAbort, { once: true });
  if (options.signal?.aborted) onAbort();
  // The journal can no longer record a create before it is sent: stop
  // everything now; the run then ends with the fault itself (driveRun).
  const offFault = journal.onFault((fault) => stop.stop('unreachable', fault.message));
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
  const wait = persistedWait(persisted);
  if (wait !== undefined) options.gate.pauseUntil(wait);
  // A wait already served (before the key check) or beyond the ceiling
  // (persisted by an older ibatch) is forgotten: the first request asks again.
  else if (persisted) journal.setRunNotBefore(runId, null);
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
    offFault();
  };
}

/**
 * The service's Retry-After a run persisted (epoch ms), while it is still
 * ahead and within the contract's ceiling; otherwise undefined.
 */
export function persistedWait(notBefore: number | null | undefined, now = Date.now()) {
  if (!notBefore || notBefore <= now || notBefore - now > LONGEST_RETRY_AFTER_MS) return undefined;
  return notBefore;
}

/** Appends to a run's timeline (report, status) and logs it: `RunContext.record`. */
export function timelineRecorder(
  journal: Journal,
  runId: string,
  logger: Logger,
): RunContext['record'] {
  return (type, message, itemKey, data, label) => {
    try {
      if (!LOG_ONLY_EVENTS.has(type))
        journal.appendEvent(runId, {
          type,
          message,
          itemKey: itemKey ?? null,
          ...(data ? { data } : {}),
        });
    } catch (error) {
      // The journal's disk failed: the run stops on that fault (wireStops,
      // driveRun); the timeline is not worth a second failure. The log still says it.
      if (!(error instanceof JournalWriteError)) throw error;
    }
    const fields = {
      event: type,
      ...(itemKey ? { item: itemKey } : {}),
      ...(label !== undefined ? { label } : {}),
      ...data,
    };
    if (isWarning(type, data)) logger.warn(fields, message);
    else logger.info(fields, message);
  };
}

/**
 * Logged, not kept in the timeline: an item's success is the routine case,
 * and its item row already says it (state, time). One event row per item was
 * an eighth of a 20,000-item journal, and it buried the retries,
 * waits and stops the timeline is for under the report's event limit.
 */
const LOG_ONLY_EVENTS: ReadonlySet<string> = new Set(['item.succeeded']);

/**
 * Timeline events a person must not miss among the routine ones: a stop of
 * any kind (credits and budget, unreachable, unauthorized, interrupted), an
 * item failed, blocked or skipped, an output lost, and a run that ended
 * short of done. Logged at warn; everything else at info.
 */
const WARNING_EVENTS: ReadonlySet<string> = new Set([
  'run.stopping',
  'item.failed',
  'item.blocked',
  'item.skipped',
  'output.failed',
  'output.lost',
  'item.lost',
  'training.failed',
]);

function isWarning(type: string, data: Record<string, unknown> | undefined): boolean {
  if (WARNING_EVENTS.has(type)) return true;
  return type === 'run.finished' && data?.status !== RUN_STATUS.completed;
}
