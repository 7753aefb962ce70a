/**
 * Training jobs and influencers. A job is queued, then processing in stage
 * `character-sheet` (skipped with 20 images) and `lora-training`, then
 * `succeeded` (influencer `ready`, `loraUrl` set) or `failed` (refund booked
 * at the failure time, influencer `failed`). The influencer is listed from
 * the moment the job is accepted, with status `training`.
 */
import {
  ERROR_CODES,
  LIMITS,
  TRAINING_IMAGE_TYPES,
  type TrainingJobRequest,
  TrainingJobRequestSchema,
} from '../contract/index.js';
import type { Answer, ApiCall } from './call.js';
import type { EmulatorContext } from './context.js';
import { EmulatorHttpError, notFound, validationError } from './http-error.js';
import { parseBody } from './parse-body.js';
import { TRAINING_COST } from './pricing.js';
import type { AccountState, TrainingRecord } from './state.js';
import { inCase } from './status-text.js';

/** Every bad asset URL, so the client can fix them all at once. */
function checkAssets(ctx: EmulatorContext, account: AccountState, urls: readonly string[]): void {
  const problems: Array<{ index: number; url: string; reason: string }> = [];
  urls.forEach((url, index) => {
    let reason: string | undefined;
    const match = /^\/assets\/([0-9a-f-]{36})\.\w+$/.exec(safePath(url, ctx.mainOrigin) ?? '');
    const asset = match ? account.assets.get(match[1] ?? '') : undefined;
    if (!match) reason = 'not an asset URL of this service';
    else if (!asset) reason = 'not an asset of this account';
    else if (!asset.uploaded) reason = 'the upload has not completed';
    else if (!TRAINING_IMAGE_TYPES.some((t) => t.mime === asset.mimeType))
      reason = `unsupported type ${asset.mimeType}`;
    if (reason) problems.push({ index, url, reason });
  });
  const first = problems[0];
  if (!first) return;
  const message = `assetUrls.${first.index}: ${first.reason}`;
  if (ctx.behaviour.trainingAssetError === 'not_found') {
    throw new EmulatorHttpError(ERROR_CODES.notFound, message, problems);
  }
  throw validationError(message, problems);
}

function safePath(url: string, origin: string): string | undefined {
  try {
    const parsed = new URL(url);
    return parsed.origin === origin ? parsed.pathname : undefined;
  } catch {
    return undefined;
  }
}

function uniqueUsername(
  ctx: EmulatorContext,
  account: AccountState,
  request: TrainingJobRequest,
): string {
  const taken = new Set([...account.influencers.values()].map((i) => i.username.toLowerCase()));
  if (request.username !== undefined) {
    if (taken.has(request.username.toLowerCase())) {
      throw validationError(`username: ${request.username} is already taken`);
    }
    return request.username;
  }
  const base =
    request.name
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 20) || 'influencer';
  let candidate = base.length >= LIMITS.usernameMin ? base : `${base}_ai`;
  while (taken.has(candidate)) candidate = `${base}_${ctx.random.ids.hex(4)}`;
  return candidate;
}

export function createTraining(
  ctx: EmulatorContext,
  call: ApiCall,
  idempotencyKey: string,
): Answer {
  const request = parseBody(TrainingJobRequestSchema, call.body);
  const account = call.account;
  checkAssets(ctx, account, request.assetUrls);
  const username = uniqueUsername(ctx, account, request);
  if (account.credits < TRAINING_COST) {
    throw new EmulatorHttpError(
      ERROR_CODES.insufficientCredits,
      `credits: training costs ${TRAINING_COST}, the balance is ${account.credits}`,
      { cost: TRAINING_COST, balance: account.credits },
    );
  }
  const now = ctx.now();
  const scale = ctx.options.timeScale;
  const phases = ctx.options.trainingMs;
  const skipCharacterSheet = request.assetUrls.length >= LIMITS.trainingImagesMax;
  const processingAt = now + phases.queued / scale;
  const loraAt = processingAt + (skipCharacterSheet ? 0 : phases.characterSheet / scale);
  const forced = call.outcomeFault === 'training-fail';
  const fails =
    forced || ctx.faults.drawOutcome('createTraining', ['training-fail']) === 'training-fail';
  const record: TrainingRecord = {
    id: ctx.newId(),
    accountId: account.id,
    influencerId: ctx.newId(),
    createdAt: now,
    processingAt,
    loraAt,
    terminalAt: loraAt + (fails ? 0.5 : 1) * (phases.lora / scale),
    fails,
    creditsCost: TRAINING_COST,
    refunded: false,
    skipCharacterSheet,
  };
  ctx.store.charge(account, TRAINING_COST, now, { trainingId: record.id, idempotencyKey });
  account.trainings.set(record.id, record);
  account.influencers.set(record.influencerId, {
    id: record.influencerId,
    name: request.name,
    username,
    trainingId: record.id,
  });
  if (fails) {
    ctx.store.scheduleRefund(record.terminalAt, () => {
      record.refunded = true;
      ctx.store.refund(account, record.creditsCost, record.terminalAt, {
        trainingId: record.id,
        idempotencyKey,
      });
    });
  }
  return { status: 202, body: trainingView(ctx, record) };
}

export function trainingView(ctx: EmulatorContext, record: TrainingRecord) {
  const now = ctx.now();
  const terminal = now >= record.terminalAt;
  const succeeded = terminal && !record.fails;
  const status =
    now < record.processingAt
      ? 'queued'
      : !terminal
        ? 'processing'
        : succeeded
          ? 'succeeded'
          : 'failed';
  const stage =
    status === 'queued'
      ? 'queued'
      : status === 'processing'
        ? now < record.loraAt
          ? 'character-sheet'
          : 'lora-training'
        : succeeded
          ? 'done'
          : 'failed';
  return {
    trainingId: record.id,
    influencerId: record.influencerId,
    status,
    ready: succeeded,
    terminal,
    refunded: record.refunded,
    creditsCost: record.creditsCost,
    loraUrl: succeeded ? `${ctx.mainOrigin}/files/lora/${record.id}.safetensors` : null,
    stage,
    characterSheetSkipped: record.skipCharacterSheet,
    error: terminal && !succeeded ? 'LoRA training failed' : null,
  };
}

export function getTraining(ctx: EmulatorContext, call: ApiCall): Answer {
  const record = call.account.trainings.get(call.params.trainingId ?? '');
  if (!record) throw notFound('training job');
  const view = trainingView(ctx, record);
  return { status: 200, body: { ...view, status: inCase(view.status, ctx.behaviour.statusCase) } };
}

export function listInfluencers(ctx: EmulatorContext, call: ApiCall): Answer {
  const characters = [...call.account.influencers.values()].map((influencer) => {
    const training = call.account.trainings.get(influencer.trainingId);
    const view = training ? trainingView(ctx, training) : undefined;
    const status = view?.ready ? 'ready' : view?.terminal ? 'failed' : 'training';
    return {
      id: influencer.id,
      name: influencer.name,
      username: influencer.username,
      ready: status === 'ready',
      status: inCase(status, ctx.behaviour.statusCase),
      trainingId: influencer.trainingId,
    };
  });
  return {
    status: 200,
    body: { total: characters.length, ready: characters.filter((c) => c.ready).length, characters },
  };
}
