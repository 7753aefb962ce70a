/**
 * The one way anything that costs credits is created on the service (a
 * generation, a training, and whatever spends next):
 *   attempt number -> idempotency key -> [intent + budget reservation
 *   committed] -> create (in a create-queue slot) -> [202 committed], or
 *   [rejected committed, reservation released] when the service refused it.
 * Every bracket is a journal commit made before the next step acts, so a kill
 * at any instant leaves the key in the journal and the next run re-sends the
 * open intent with the same key and body (the service replays it instead of
 * charging twice). Callers inject the create call and react to the result;
 * they never touch keys, reservations or attempt states themselves.
 */
import {
  ATTEMPT_STATE,
  type AttemptRecord,
  type CreatedRemoteIds,
  type InfluencerLookup,
  ITEM_STATE,
  type ItemState,
  idempotencyKey,
} from '../journal/index.js';
import { contentHash } from '../shared/index.js';
import { classifyError } from './classify.js';
import type { RunContext } from './context.js';
import { type CrashPointName, crashPoint } from './crash-points.js';

/** What a create's 202 said, as the journal records it. */
export interface CreateAnswer {
  /** `creditsCost` of the 202: replaces the reservation as the item's charge. */
  readonly chargedCost: number;
  readonly httpStatus: number;
  readonly remote: CreatedRemoteIds;
}

/** The crash points (src/scheduler/crash-points.ts) of each kind of paid create. */
export const SPEND_CRASH_POINTS = {
  generation: {
    afterIntent: 'after-intent',
    afterCreateResponse: 'after-create-response',
    afterSubmitted: 'after-submitted',
  },
  training: {
    afterIntent: 'training-after-intent',
    afterCreateResponse: 'training-after-create-response',
    afterSubmitted: undefined,
  },
} as const satisfies Record<
  string,
  {
    afterIntent: CrashPointName;
    afterCreateResponse: CrashPointName;
    afterSubmitted: CrashPointName | undefined;
  }
>;
export type SpendKind = keyof typeof SPEND_CRASH_POINTS;

/**
 * Create-queue priority (higher goes first): a training is what dependent
 * items wait for and takes minutes, so it never queues behind generations.
 */
const QUEUE_PRIORITY: Record<SpendKind, number> = { generation: 0, training: 1 };

export interface PaidCreate<Body, Answer extends CreateAnswer> {
  readonly kind: SpendKind;
  /** The journal item paying for it; its step id goes into the key. */
  readonly itemKey: string;
  /** Sends the create (the injected service call) with the journal's key. */
  send(body: Body, key: string, signal: AbortSignal): Promise<Answer>;
  /** A training's record, marked `intent` in the intent's own transaction. */
  readonly training?: InfluencerLookup;
}

/** A new attempt with its body and quote, or an open one to re-send as recorded. */
export type AttemptStart<Body> =
  | { readonly body: Body; readonly quotedCost: number | null }
  | { readonly open: AttemptRecord };

export interface SubmittedAttempt<Answer> {
  /** The attempt as stored after its 202. */
  readonly attempt: AttemptRecord;
  readonly answer: Answer;
}

/**
 * Runs one paid create inside a create-queue slot (reservations are taken
 * only when a create is about to go). Resolves `undefined` when nothing was
 * sent: the run is stopping, or the reservation would pass the budget (then
 * the run stops with `credits`). Rejects with the create's error; a refusal
 * (4xx, 402) is first recorded as `rejected` with its reservation released,
 * anything else leaves the intent open for the next run to re-send.
 * In the run chain (docs/glossary.md): the journal-before-spend protocol for one paid
 * create (intent, reservation, key, 202). Its own function because
 * generations (`runGenerationItem`) and trainings share it: one copy of the
 * rule that nothing is sent without a committed intent and key.
 */
export function runJournaledAttempt<Body, Answer extends CreateAnswer>(
  ctx: RunContext,
  create: PaidCreate<Body, Answer>,
  start: AttemptStart<Body>,
): Promise<SubmittedAttempt<Answer> | undefined> {
  return ctx.createQueue.add(
    async () => {
      const intent =
        'open' in start ? resumable(ctx, start.open) : commitIntent(ctx, create, start);
      if (!intent) return undefined;
      return send(ctx, create, intent);
    },
    { priority: QUEUE_PRIORITY[create.kind] },
  );
}

/** An open intent is re-sent unless the run stops hard; a budget stop still finishes what it reserved. */
function resumable(ctx: RunContext, open: AttemptRecord): AttemptRecord | undefined {
  return !ctx.stop.mayCreate && ctx.stop.reason !== 'credits' ? undefined : open;
}

function commitIntent<Body>(
  ctx: RunContext,
  create: PaidCreate<Body, CreateAnswer>,
  start: { readonly body: Body; readonly quotedCost: number | null },
): AttemptRecord | undefined {
  if (!ctx.stop.mayCreate) return undefined;
  const { journal, runId } = ctx;
  const item = journal.getItem(runId, create.itemKey);
  if (!item) throw new Error(`No item ${create.itemKey} in run ${runId}`);
  const attemptNo = item.attemptsUsed + 1;
  const result = journal.recordAttemptIntent({
    runId,
    itemKey: item.itemKey,
    attemptNo,
    idempotencyKey: idempotencyKey({
      jobName: ctx.job.name,
      runId,
      stepId: item.stepId,
      itemKey: item.itemKey,
      attempt: attemptNo,
    }),
    request: start.body,
    requestHash: contentHash(start.body),
    quotedCost: start.quotedCost,
    ...(ctx.spendCap ? { spendCap: ctx.spendCap } : {}),
    ...(create.training ? { training: create.training } : {}),
  });
  if (result.kind === 'over-budget') {
    const refusal = result.reserve;
    const { cap, limit, committed, requested } = refusal;
    const what =
      refusal.cap === 'budget'
        ? `budget reached: ${round2(committed)} of the job's ${limit} credits committed over its runs, ${round2(refusal.standing.remaining ?? 0)} left`
        : `--max-spend reached: ${round2(committed)} of ${limit} credits committed by this invocation`;
    ctx.stop.stop('credits', `${what}, the next ${create.kind} needs ${requested}`, cap);
    return undefined;
  }
  crashPoint(SPEND_CRASH_POINTS[create.kind].afterIntent);
  return result.attempt;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

async function send<Body, Answer extends CreateAnswer>(
  ctx: RunContext,
  create: PaidCreate<Body, Answer>,
  attempt: AttemptRecord,
): Promise<SubmittedAttempt<Answer>> {
  const { journal, runId } = ctx;
  const signal = ctx.stop.hardStop.signal;
  const at = { runId, itemKey: attempt.itemKey, attemptNo: attempt.attemptNo };
  let answer: Answer;
  try {
    answer = await create.send(attempt.request as Body, attempt.idempotencyKey, signal);
  } catch (error) {
    const verdict = classifyError(error, signal);
    if (verdict.kind === 'item' || verdict.reason === 'credits') {
      // Refused before anything was charged: release the reservation. A 402
      // leaves the item pending for the run after a top-up.
      const itemState: ItemState = verdict.kind === 'stop' ? ITEM_STATE.pending : ITEM_STATE.failed;
      journal.recordAttemptOutcome({
        ...at,
        state: ATTEMPT_STATE.rejected,
        itemState,
        error: verdict.message,
        httpStatus: verdict.kind === 'item' ? (verdict.status ?? null) : 402,
      });
    }
    throw error;
  }
  const points = SPEND_CRASH_POINTS[create.kind];
  crashPoint(points.afterCreateResponse);
  const stored = journal.recordAttemptSubmitted({
    ...at,
    chargedCost: answer.chargedCost,
    httpStatus: answer.httpStatus,
    ...answer.remote,
  });
  if (attempt.quotedCost !== null && answer.chargedCost !== attempt.quotedCost) {
    ctx.record(
      'charge.drift',
      `charged ${answer.chargedCost}, quoted ${attempt.quotedCost}`,
      attempt.itemKey,
    );
  }
  if (points.afterSubmitted) crashPoint(points.afterSubmitted);
  if (!stored) throw new Error(`Attempt ${attempt.attemptNo} of ${attempt.itemKey} vanished`);
  return { attempt: stored, answer };
}
