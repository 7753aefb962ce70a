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
  idempotencyKey,
  isStateIn,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import { contentHash } from '../shared/index.js';
import type { AssetResolver } from './assets.js';
import { classifyError, messageOf } from './classify.js';
import { GenerationDeadlineError } from './completion-watcher.js';
import type { RunContext } from './context.js';
import { crashPoint } from './crash-points.js';
import { DependencyFailedError, type ItemGraph } from './item-graph.js';
import { collectOutputs, resolveRequest } from './item-io.js';
import { RunStoppedError } from './stop-control.js';
import type { InfluencerResolver } from './trainings.js';
import type { ItemOutcomeState } from './types.js';

export interface ItemDeps {
  readonly assets: AssetResolver;
  readonly influencers: InfluencerResolver;
  readonly graph: ItemGraph;
  /** Called once an item's outputs are recorded: queue their downloads. */
  onOutputs(itemKey: string): void;
  /** Expected latency of a model in ms (already scaled to the run's speed). */
  expectedLatencyMs(modelId: string): number;
  /** Deadline for one generation to become terminal, in ms. */
  readonly defaultTimeoutMs: number;
}

export async function runGenerationItem(
  ctx: RunContext,
  deps: ItemDeps,
  step: LoadedStep,
  item: JobItem,
): Promise<void> {
  const { journal, runId } = ctx;
  const stored = journal.getItem(runId, item.key);
  if (stored && isStateIn(TERMINAL_ITEM_STATES, stored.state)) {
    settleGraph(ctx, deps.graph, item.key, stored.state, stored.error);
    return;
  }
  let resolved: GenerationRequest | undefined;
  try {
    for (;;) {
      let attempt = journal.getOpenAttempt(runId, item.key);
      if (!attempt) {
        if (!ctx.stop.mayCreate) return;
        resolved ??= await resolveRequest(ctx, deps, item);
        attempt = await createAttempt(ctx, item, resolved);
        if (!attempt) return;
      } else if (attempt.state === ATTEMPT_STATE.intent) {
        attempt = await createAttempt(ctx, item, attempt.request as GenerationRequest, attempt);
        if (!attempt) return;
      }
      const next = await awaitOutcome(ctx, deps, step, item, attempt);
      if (next !== 'retry') return;
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
    finish(ctx, deps.graph, item, ITEM_STATE.failed, verdict.message);
  }
}

/**
 * Commits the intent (reserving the quoted cost) and sends the create, both
 * inside a create-queue slot so reservations are taken only when a create is
 * about to go. `open` re-sends a recorded intent with its key and body.
 */
async function createAttempt(
  ctx: RunContext,
  item: JobItem,
  request: GenerationRequest,
  open?: AttemptRecord,
): Promise<AttemptRecord | undefined> {
  const { journal, runId } = ctx;
  const signal = ctx.stop.hardStop.signal;
  let quotedCost: number | null = open?.quotedCost ?? null;
  if (!open) {
    quotedCost = await ctx.quotes.quote(item.modelId, request, signal);
    const previous = journal.getItem(runId, item.key)?.quotedCost;
    if (previous !== null && previous !== undefined && previous !== quotedCost) {
      ctx.record(
        'quote.drift',
        `price of ${item.stepId}/${item.label} changed from ${previous} to ${quotedCost}`,
        item.key,
        { previous, quotedCost },
      );
    }
    journal.setItemQuote(runId, item.key, quotedCost);
  }
  return ctx.createQueue.add(async () => {
    let attempt = open;
    if (!attempt) {
      if (!ctx.stop.mayCreate) return undefined;
      const attemptNo = (journal.getItem(runId, item.key)?.attemptsUsed ?? 0) + 1;
      const key = idempotencyKey({
        jobName: ctx.job.name,
        runId,
        stepId: item.stepId,
        itemKey: item.key,
        attempt: attemptNo,
      });
      const intent = journal.recordAttemptIntent({
        runId,
        itemKey: item.key,
        attemptNo,
        idempotencyKey: key,
        request,
        requestHash: contentHash(request),
        quotedCost,
      });
      if (intent.kind === 'over-budget') {
        const { budget, committed, requested } = intent.reserve;
        ctx.stop.stop(
          'credits',
          `budget reached: ${committed} of ${budget} credits committed, next item needs ${requested}`,
        );
        return undefined;
      }
      attempt = intent.attempt;
      crashPoint('after-intent');
    } else if (!ctx.stop.mayCreate && ctx.stop.reason !== 'credits') {
      return undefined;
    }
    try {
      const created = await ctx.client.createGeneration(
        item.modelId,
        attempt.request as GenerationRequest,
        {
          idempotencyKey: attempt.idempotencyKey,
          signal,
        },
      );
      crashPoint('after-create-response');
      ctx.watcher.noteCreated();
      journal.recordAttemptSubmitted({
        runId,
        itemKey: item.key,
        attemptNo: attempt.attemptNo,
        chargedCost: created.creditsCost,
        generationIds: created.ids,
        taskId: created.taskId ?? null,
        httpStatus: created.httpStatus,
      });
      if (quotedCost !== null && created.creditsCost !== quotedCost) {
        ctx.record(
          'charge.drift',
          `charged ${created.creditsCost}, quoted ${quotedCost}`,
          item.key,
        );
      }
      crashPoint('after-submitted');
      return journal.getAttempt(runId, item.key, attempt.attemptNo);
    } catch (error) {
      const verdict = classifyError(error, signal);
      if (verdict.kind === 'stop' && verdict.reason !== 'credits') throw error;
      // Refused before anything was charged: release the reservation.
      const itemState: ItemState = verdict.kind === 'stop' ? ITEM_STATE.pending : ITEM_STATE.failed;
      journal.recordAttemptOutcome({
        runId,
        itemKey: item.key,
        attemptNo: attempt.attemptNo,
        state: ATTEMPT_STATE.rejected,
        itemState,
        error: verdict.message,
        httpStatus: verdict.kind === 'item' ? (verdict.status ?? null) : 402,
      });
      throw error;
    }
  });
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
  const watch = (id: string) =>
    ctx.watcher.watch(item.kind, id, {
      expectedAt: submittedAt + deps.expectedLatencyMs(item.modelId),
      deadlineAt: submittedAt + timeoutMs,
    });
  let statuses: GenerationStatus[];
  try {
    const first = await watch(ids[0] ?? '');
    const rest = ids.length > 1 && outputUrls(first).length < ids.length ? ids.slice(1) : [];
    statuses = [first, ...(await Promise.all(rest.map(watch)))];
  } catch (error) {
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
  if (outputs.length > 0) {
    const missing = item.expectedOutputs - outputs.length;
    const note = missing > 0 ? `${missing} of ${item.expectedOutputs} outputs failed` : null;
    journal.recordAttemptOutcome({
      ...base,
      state: ATTEMPT_STATE.succeeded,
      itemState: ITEM_STATE.succeeded,
      error: note,
      outputs,
    });
    crashPoint('after-outcome');
    deps.graph.succeeded(item.key, { generationIds: outputs.map((o) => o.generationId ?? '') });
    deps.onOutputs(item.key);
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
    );
    return 'retry';
  }
  finish(ctx, deps.graph, item, finalState, error);
  return 'done';
}

function settleGraph(
  ctx: RunContext,
  graph: ItemGraph,
  itemKey: string,
  state: ItemState,
  error: string | null,
): void {
  if (state === ITEM_STATE.succeeded) {
    const outputs = ctx.journal.listOutputs(ctx.runId).filter((o) => o.itemKey === itemKey);
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
): void {
  if (state !== ITEM_STATE.succeeded)
    graph?.failed(item.key, `source ${item.stepId}/${item.label} ${state}: ${error ?? ''}`);
  ctx.record(
    `item.${state}`,
    `${item.stepId}/${item.label} ${state}${error ? `: ${error}` : ''}`,
    item.key,
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
