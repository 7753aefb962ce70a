/**
 * One generation item, from its inputs to its outcome:
 *   wait for inputs -> quote -> [intent committed] -> create -> [202 committed]
 *   -> watch until terminal -> [outcome committed] -> downloads.
 * Every arrow in brackets is a journal commit made before the next step acts,
 * so a kill at any instant resumes with the same idempotency key (the service
 * replays instead of charging twice) or keeps polling what was submitted.
 * A failed-and-refunded attempt is retried as a new attempt with a new key.
 */
import {
  type GenerationRequest,
  type GenerationStatus,
  generationOutcome,
  outputUrls,
} from '../contract/index.js';
import type { JobItem, LoadedStep } from '../job/index.js';
import {
  ATTEMPT_STATE,
  type AttemptRecord,
  ITEM_STATE,
  type ItemState,
  isStateIn,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import type { AssetResolver } from './assets.js';
import { classifyError, messageOf } from './classify.js';
import { GenerationDeadlineError } from './completion-watcher.js';
import type { RunContext } from './context.js';
import { crashPoint } from './crash-points.js';
import { DependencyFailedError, type ItemGraph } from './item-graph.js';
import { collectOutputs, resolveRequest } from './item-io.js';
import type { WindowSlot } from './item-window.js';
import {
  type AttemptStart,
  type CreateAnswer,
  type PaidCreate,
  runJournaledAttempt,
} from './journaled-attempt.js';
import { NotKnownToServiceError } from './not-known.js';
import { RunStoppedError } from './stop-control.js';
import type { InfluencerResolver } from './trainings.js';
import type { ItemOutcomeState } from './types.js';

export interface ItemDeps {
  readonly assets: AssetResolver;
  readonly influencers: InfluencerResolver;
  readonly graph: ItemGraph;
  /** Called once an item's outputs are recorded: queue their downloads. */
  onOutputs(item: JobItem): void;
  /** Expected latency of a model in ms (already scaled to the run's speed). */
  expectedLatencyMs(modelId: string): number;
  /** Deadline for one generation to become terminal, in ms. */
  readonly defaultTimeoutMs: number;
}

/**
 * Drives one item of the run to its outcome. `slot` is its place in the run's
 * item window (item-window.ts): left once its create is answered, taken
 * again for a retry's create.
 * In the run chain (docs/glossary.md): one generation item's life (resolve the
 * request, create, wait, retry, record outputs). Its own function because
 * `driveItems` runs many of them at once in the window, and trainings take
 * the same paid path (`runJournaledAttempt`) without this item logic.
 */
export async function runGenerationItem(
  ctx: RunContext,
  deps: ItemDeps,
  step: LoadedStep,
  item: JobItem,
  slot: WindowSlot,
): Promise<void> {
  const { journal, runId } = ctx;
  const stored = journal.getItem(runId, item.key);
  if (stored && isStateIn(TERMINAL_ITEM_STATES, stored.state)) {
    settleGraph(ctx, deps.graph, item.key, stored.state, stored.error);
    return;
  }
  let resolved: GenerationRequest | undefined;
  // The item's last quote: only this item's own attempts below change it.
  let quoted = stored?.quotedCost ?? null;
  try {
    for (;;) {
      let attempt = journal.getOpenAttempt(runId, item.key);
      if (!attempt) {
        if (!ctx.stop.mayCreate) return;
        resolved ??= await resolveRequest(ctx, deps, item);
        const quotedCost = await quote(ctx, item, resolved, quoted);
        quoted = quotedCost;
        attempt = await createAttempt(ctx, item, { body: resolved, quotedCost });
        if (!attempt) return;
      } else if (attempt.state === ATTEMPT_STATE.intent) {
        attempt = await createAttempt(ctx, item, { open: attempt });
        if (!attempt) return;
      }
      slot.leave();
      const next = await awaitOutcome(ctx, deps, step, item, attempt);
      if (next !== 'retry') return;
      await slot.enter();
    }
  } catch (error) {
    if (error instanceof RunStoppedError) return;
    if (error instanceof DependencyFailedError) {
      journal.setItemState(runId, item.key, { state: ITEM_STATE.skipped, error: error.message });
      finish(ctx, deps.graph, item, ITEM_STATE.skipped, error.message);
      return;
    }
    const verdict = classifyError(error, ctx.stop.hardStop.signal);
    if (verdict.kind === 'stop') {
      ctx.stop.stop(verdict.reason, verdict.message);
      return;
    }
    journal.setItemState(runId, item.key, { state: ITEM_STATE.failed, error: verdict.message });
    finish(ctx, deps.graph, item, ITEM_STATE.failed, verdict.message, endpointOf(error));
  }
}

/** The client call that failed: its message says it in words, the log keeps the id. */
function endpointOf(error: unknown): Record<string, unknown> | undefined {
  const endpoint = (error as { endpoint?: unknown } | null)?.endpoint;
  return typeof endpoint === 'string' ? { endpoint } : undefined;
}

/**
 * Hands a new attempt (its body quoted already, outside the create queue: a
 * quote spends nothing), or the recorded intent to re-send, to the
 * journaled spend protocol with the generation create as its call.
 */
async function createAttempt(
  ctx: RunContext,
  item: JobItem,
  start: AttemptStart<GenerationRequest>,
): Promise<AttemptRecord | undefined> {
  const submitted = await runJournaledAttempt(ctx, generationCreate(ctx, item), start);
  return submitted?.attempt;
}

function generationCreate(
  ctx: RunContext,
  item: JobItem,
): PaidCreate<GenerationRequest, CreateAnswer> {
  return {
    kind: 'generation',
    itemKey: item.key,
    send: async (body, key, signal) => {
      const created = await ctx.client.createGeneration(item.modelId, body, {
        idempotencyKey: key,
        signal,
      });
      ctx.watcher.noteCreated();
      return {
        chargedCost: created.creditsCost,
        httpStatus: created.httpStatus,
        remote: { generationIds: created.ids, taskId: created.taskId ?? null },
      };
    },
  };
}

/** Quotes `request` and records it on the item; `previous`: the item's last quote, if any. */
async function quote(
  ctx: RunContext,
  item: JobItem,
  request: GenerationRequest,
  previous: number | null,
): Promise<number> {
  const { journal, runId } = ctx;
  const quotedCost = await ctx.quotes.quote(item.modelId, request, ctx.stop.hardStop.signal);
  if (previous !== null && previous !== quotedCost) {
    ctx.record(
      'quote.drift',
      `price of ${item.stepId}/${item.label} changed from ${previous} to ${quotedCost}`,
      item.key,
      { previous, quotedCost },
    );
  }
  journal.setItemQuote(runId, item.key, quotedCost);
  return quotedCost;
}

async function awaitOutcome(
  ctx: RunContext,
  deps: ItemDeps,
  step: LoadedStep,
  item: JobItem,
  attempt: AttemptRecord,
): Promise<'done' | 'retry'> {
  const { journal, runId } = ctx;
  const ids = attempt.generationIds;
  const submittedAt = attempt.submittedAt ?? Date.now();
  const timeoutMs = step.timeoutMs ?? deps.defaultTimeoutMs;
  // One id and one copy: its history entry may settle it (several copies
  // need the read by id, the only view of every copy's URL).
  const singleOutput = ids.length === 1 && item.expectedOutputs === 1;
  const watch = (id: string) =>
    ctx.watcher.watch(item.kind, id, {
      expectedAt: submittedAt + deps.expectedLatencyMs(item.modelId),
      deadlineAt: submittedAt + timeoutMs,
      singleOutput,
    });
  let statuses: GenerationStatus[];
  try {
    const first = await watch(ids[0] ?? '');
    const rest = ids.length > 1 && outputUrls(first).length < ids.length ? ids.slice(1) : [];
    statuses = [first, ...(await Promise.all(rest.map(watch)))];
  } catch (error) {
    if (error instanceof NotKnownToServiceError)
      return lostAttempt(ctx, deps, step, item, attempt, error);
    if (!(error instanceof GenerationDeadlineError)) throw error;
    journal.recordAttemptOutcome({
      runId,
      itemKey: item.key,
      attemptNo: attempt.attemptNo,
      state: ATTEMPT_STATE.failed,
      itemState: ITEM_STATE.failed,
      error: error.message,
    });
    finish(ctx, deps.graph, item, ITEM_STATE.failed, error.message);
    return 'done';
  }
  const outcomes = statuses.map((s) => generationOutcome(s));
  const outputs = collectOutputs(item, statuses, ids);
  const perId = attempt.chargedCost / Math.max(1, ids.length);
  const refundedCredits = statuses
    .filter((s) => s.refunded)
    .reduce((sum, s) => sum + (s.creditsCost ?? perId), 0);
  const attemptsAllowed = 1 + step.retries;
  const canRetry = attempt.attemptNo < attemptsAllowed;
  const base = { runId, itemKey: item.key, attemptNo: attempt.attemptNo, refundedCredits };
  const files = outputs.filter((o) => o.url !== null);
  if (files.length > 0) {
    const missing = item.expectedOutputs - files.length;
    const note = missing > 0 ? `${missing} of ${item.expectedOutputs} outputs failed` : null;
    // The failed copies are recorded too (state failed, no URL): the manifest
    // and the report list them with the service's reason.
    journal.recordAttemptOutcome({
      ...base,
      state: ATTEMPT_STATE.succeeded,
      itemState: ITEM_STATE.succeeded,
      error: note,
      outputs,
    });
    crashPoint('after-outcome');
    for (const copy of outputs) {
      if (copy.url !== null) continue;
      ctx.record(
        'output.failed',
        `${item.stepId}/${item.label} #${copy.n} failed: ${copy.error ?? 'generation failed'}`,
        item.key,
      );
    }
    deps.graph.succeeded(item.key, { generationIds: files.map((o) => o.generationId ?? '') });
    deps.onOutputs(item);
    finish(ctx, undefined, item, ITEM_STATE.succeeded);
    return 'done';
  }
  const blocked = outcomes.includes('blocked');
  const error =
    statuses.map((s) => s.error).find(Boolean) ??
    (blocked ? 'blocked by the safety filter' : 'generation failed');
  const retry = canRetry && (!blocked || step.retrySafetyBlocked);
  const finalState = blocked ? ITEM_STATE.blocked : ITEM_STATE.failed;
  journal.recordAttemptOutcome({
    ...base,
    state: blocked ? ATTEMPT_STATE.blocked : ATTEMPT_STATE.failed,
    itemState: retry ? ITEM_STATE.pending : finalState,
    error: `${error}${refundedCredits > 0 ? ' (refunded)' : ''}`,
  });
  if (retry) {
    ctx.record(
      'item.retry',
      `${item.stepId}/${item.label}: ${error}; retrying (attempt ${attempt.attemptNo + 1} of ${attemptsAllowed})`,
      item.key,
      undefined,
      item.label,
    );
    return 'retry';
  }
  finish(ctx, deps.graph, item, finalState, error);
  return 'done';
}

/**
 * A generation of this attempt is not known to the service (not-known.ts).
 * Unless the user said the service lost it (`--forget-lost`), the run stops
 * and the attempt stays open: with the right key or base URL back, the next
 * run polls it again. Forgotten, it is failed with its charge kept (the
 * service may have taken it) and the item is made again like a failed one.
 */
function lostAttempt(
  ctx: RunContext,
  deps: ItemDeps,
  step: LoadedStep,
  item: JobItem,
  attempt: AttemptRecord,
  error: NotKnownToServiceError,
): 'done' | 'retry' {
  if (!ctx.forgetLost) {
    ctx.stop.stop('unauthorized', error.message, undefined, NotKnownToServiceError.NEXT_STEP);
    return 'done';
  }
  const retry = attempt.attemptNo < 1 + step.retries;
  const message = `lost by the service (--forget-lost): ${error.message}`;
  ctx.journal.recordAttemptOutcome({
    runId: ctx.runId,
    itemKey: item.key,
    attemptNo: attempt.attemptNo,
    state: ATTEMPT_STATE.failed,
    itemState: retry ? ITEM_STATE.pending : ITEM_STATE.failed,
    error: message,
  });
  if (retry) {
    ctx.record('item.lost', `${item.stepId}/${item.label}: ${message}; making it again`, item.key);
    return 'retry';
  }
  finish(ctx, deps.graph, item, ITEM_STATE.failed, message);
  return 'done';
}

export function settleGraph(
  ctx: Pick<RunContext, 'journal' | 'runId'>,
  graph: ItemGraph,
  itemKey: string,
  state: ItemState,
  error: string | null,
): void {
  if (state === ITEM_STATE.succeeded) {
    // A failed copy (no URL) is no source a `from:` item could use. The
    // item's own outputs by key: a resume settles every done item of the run
    // here, and reading the run's outputs for each kept a 15,000-done resume
    // from creating for minutes.
    const outputs = ctx.journal
      .listOutputs(ctx.runId, undefined, itemKey)
      .filter((o) => o.url !== null);
    graph.succeeded(itemKey, {
      generationIds: outputs.sort((a, b) => a.n - b.n).map((o) => o.generationId ?? ''),
    });
  } else {
    graph.failed(itemKey, `source item ${itemKey} ${state}${error ? `: ${error}` : ''}`);
  }
}

function finish(
  ctx: RunContext,
  graph: ItemGraph | undefined,
  item: JobItem,
  state: ItemOutcomeState,
  error?: string,
  data?: Record<string, unknown>,
): void {
  if (state !== ITEM_STATE.succeeded)
    graph?.failed(item.key, `source ${item.stepId}/${item.label} ${state}: ${error ?? ''}`);
  ctx.record(
    `item.${state}`,
    `${item.stepId}/${item.label} ${state}${error ? `: ${error}` : ''}`,
    item.key,
    data,
    item.label,
  );
  ctx.emit({
    type: 'item-done',
    stepId: item.stepId,
    itemKey: item.key,
    label: item.label,
    state,
    ...(error ? { error: messageOf(error) } : {}),
  });
}
