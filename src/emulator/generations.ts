/**
 * Generations: preview, create (validate, price, check credits, charge, queue),
 * poll and history. State is derived from timestamps set at creation:
 * queued until `processingAt`, processing until `terminalAt`, then terminal
 * (success, failed + refund, or safety-blocked). A failure's refund is booked
 * by `Store.settle` at `terminalAt`, before any later read.
 */
import {
  ERROR_CODES,
  type GenerationRequest,
  GenerationRequestSchema,
  type Kind,
} from '../contract/index.js';
import type { Answer, ApiCall } from './call.js';
import type { EmulatorContext } from './context.js';
import type { FaultKind } from './fault-kinds.js';
import { IMAGE_EXT, OUTPUT_SEGMENTS } from './files.js';
import { EmulatorHttpError, notFound, validationError } from './http-error.js';
import { validateGenerationRequest } from './model-input.js';
import type { EmulatorModel } from './model-types.js';
import { findModel } from './models.js';
import type { Behaviour } from './options.js';
import { parseBody } from './parse-body.js';
import { priceModel } from './pricing.js';
import type { GenerationOutcome, GenerationRecord } from './state.js';
import { inCase } from './status-text.js';

function modelOf(call: ApiCall): EmulatorModel {
  const model = findModel(call.params.modelId ?? '');
  if (!model) throw notFound(`model ${call.params.modelId}`);
  return model;
}

function validRequest(
  ctx: EmulatorContext,
  call: ApiCall,
  model: EmulatorModel,
  resolveReferences = true,
): GenerationRequest {
  const request = parseBody(GenerationRequestSchema, call.body);
  validateGenerationRequest(ctx, call.account, model, request, { resolveReferences });
  return request;
}

/**
 * Quotes a request checked like a create for shape; its references (media
 * ownership, influencer, source generation) are resolved only when
 * `previewChecksReferences` is on, since prices never depend on them.
 */
export function previewCredits(ctx: EmulatorContext, call: ApiCall): Answer {
  const model = modelOf(call);
  const request = validRequest(ctx, call, model, ctx.behaviour.previewChecksReferences);
  const price = priceModel(model, request);
  return {
    status: 200,
    body: { modelId: model.id, credits: { cost: price.cost, description: price.description } },
  };
}

const OUTCOME_CANDIDATES: readonly FaultKind[] = [
  'generation-fail',
  'safety-block',
  'never-terminal',
];

function outcomeFor(
  ctx: EmulatorContext,
  forced: FaultKind | undefined,
): {
  outcome: GenerationOutcome;
  blockStyle?: Behaviour['safetyBlock'];
} {
  const fault = forced ?? ctx.faults.drawOutcome('createGeneration', OUTCOME_CANDIDATES);
  switch (fault) {
    case 'generation-fail':
      return { outcome: 'failed' };
    case 'never-terminal':
      return { outcome: 'never' };
    case 'safety-block':
      return ctx.behaviour.safetyBlock === 'refunded'
        ? { outcome: 'failed', blockStyle: 'refunded' }
        : { outcome: 'blocked', blockStyle: ctx.behaviour.safetyBlock };
    default:
      return { outcome: 'success' };
  }
}

/**
 * `copy-fail` fails only the last of several copies (the others succeed, or
 * take their chances with the probabilistic faults); every other forced
 * fault applies to each copy.
 */
function copyFault(
  forced: FaultKind | undefined,
  index: number,
  copies: number,
): FaultKind | undefined {
  if (forced !== 'copy-fail') return forced;
  return copies > 1 && index === copies - 1 ? 'generation-fail' : undefined;
}

export function latencyRange(
  ctx: EmulatorContext,
  model: EmulatorModel,
): readonly [number, number] {
  return ctx.options.latency[model.id] ?? model.latencyMs;
}

/** Validates, checks credits, charges once and queues one record per output. */
export function createGeneration(
  ctx: EmulatorContext,
  call: ApiCall,
  idempotencyKey: string | undefined,
): Answer {
  const model = modelOf(call);
  const request = validRequest(ctx, call, model);
  const price = priceModel(model, request);
  const account = call.account;
  if (account.credits < price.cost) {
    throw new EmulatorHttpError(
      ERROR_CODES.insufficientCredits,
      `credits: this request costs ${price.cost}, the balance is ${account.credits}`,
      { cost: price.cost, balance: account.credits },
    );
  }
  const now = ctx.now();
  const copies = model.kind === 'image' ? (request.copies ?? 1) : 1;
  const taskId = ctx.newId();
  const [min, max] = latencyRange(ctx, model);
  const prompt = typeof request.input.prompt === 'string' ? request.input.prompt : '';
  const records: GenerationRecord[] = [];
  for (let index = 0; index < copies; index++) {
    const total = ctx.random.latency.between(min, max) / ctx.options.timeScale;
    const { outcome, blockStyle } = outcomeFor(ctx, copyFault(call.outcomeFault, index, copies));
    records.push({
      id: ctx.newId(),
      accountId: account.id,
      taskId,
      modelId: model.id,
      kind: model.kind,
      prompt,
      createdAt: now,
      processingAt: now + total * 0.15,
      terminalAt: now + total,
      outcome,
      ...(blockStyle ? { blockStyle } : {}),
      creditsCost: price.perOutput,
      refunded: false,
      index,
    });
  }
  const ids = records.map((r) => r.id);
  ctx.store.charge(account, price.cost, now, {
    generationIds: ids,
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });
  for (const record of records) {
    account.generations.set(record.id, record);
    account.generationOrder.push(record);
    if (record.outcome === 'failed') {
      ctx.store.scheduleRefund(record.terminalAt, () => {
        record.refunded = true;
        ctx.store.refund(account, record.creditsCost, record.terminalAt, {
          generationIds: [record.id],
          ...(idempotencyKey ? { idempotencyKey } : {}),
        });
      });
    }
  }
  return {
    status: 202,
    body: {
      status: 'queued',
      kind: model.kind,
      modelId: model.id,
      ids,
      taskId,
      creditsCost: price.cost,
    },
  };
}

type Phase = 'queued' | 'processing' | 'success' | 'failed' | 'blocked';

function phaseOf(record: GenerationRecord, now: number): Phase {
  if (now < record.processingAt) return 'queued';
  if (record.outcome === 'never' || now < record.terminalAt) return 'processing';
  return record.outcome;
}

/** The extra segment of `outputUrlStyle: 'hostile'` (served like the plain URL). */
export const HOSTILE_OUTPUT_SEGMENT = `..%2F..%2F..%2F..%2Fetc%2Fpasswd%00%2e%2e%5Cevil${'x'.repeat(3000)}`;

export function outputUrl(ctx: EmulatorContext, record: GenerationRecord): string {
  const name = `0.${record.kind === 'image' ? IMAGE_EXT[ctx.behaviour.imageFormat] : 'mp4'}`;
  const host = new URL(ctx.mainOrigin).host;
  const style = ctx.behaviour.outputUrlStyle;
  switch (style) {
    case 'data':
      // Only the PNG signature: a client must refuse the scheme, not decode it.
      return 'data:image/png;base64,iVBORw0KGgo=';
    case 'ftp':
      return `ftp://${host}/files/${record.id}/${name}`;
    case 'file':
      return `file:///files/${record.id}/${name}`;
    case 'javascript':
      return `javascript:alert(document.cookie)//${name}`;
    default: {
      const extra = SERVED_SEGMENT[style];
      return `${ctx.mainOrigin}/files/${record.id}/${extra ? `${extra}/` : ''}${name}`;
    }
  }
}

/** The extra segment of each style served on the main origin (see files.ts). */
const SERVED_SEGMENT: Readonly<Record<string, string>> = {
  hostile: HOSTILE_OUTPUT_SEGMENT,
  'cross-origin-redirect': OUTPUT_SEGMENTS.redirect,
  'html-body': OUTPUT_SEGMENTS.html,
  'not-media': OUTPUT_SEGMENTS.notMedia,
};

/** The poll view of a generation (status string in the lower-case vocabulary). */
export function generationView(ctx: EmulatorContext, record: GenerationRecord) {
  // One clock reading for the phase and the refunds: the request's own
  // settle read the clock earlier, and a failure that became terminal since
  // must show its refund in the same view (the service books it at once).
  const now = ctx.now();
  ctx.store.settle(now);
  const phase = phaseOf(record, now);
  const noUrlSuccess = phase === 'blocked' && record.blockStyle === 'success-no-url';
  const hasOutput = phase === 'success';
  const status = noUrlSuccess ? 'success' : phase;
  const terminal = phase === 'success' || phase === 'failed' || phase === 'blocked';
  const blockedError = record.blockStyle ? 'blocked by the safety filter' : undefined;
  const url = hasOutput ? outputUrl(ctx, record) : null;
  return {
    output: url,
    id: record.id,
    kind: record.kind,
    modelId: record.modelId,
    status,
    ready: hasOutput || noUrlSuccess,
    terminal,
    refunded: record.refunded,
    ...(record.kind === 'video' ? { url } : { urls: url ? [url] : [] }),
    creditsCost: record.creditsCost,
    error:
      phase === 'failed'
        ? (blockedError ?? 'the provider failed to generate this output')
        : phase === 'blocked'
          ? (blockedError ?? null)
          : null,
    taskId: record.taskId,
    prompt: record.prompt,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}

export function getGeneration(ctx: EmulatorContext, call: ApiCall, kind: Kind): Answer {
  const record = call.account.generations.get(call.params.generationId ?? '');
  if (!record || record.kind !== kind) throw notFound(`${kind} generation`);
  const { output: _output, ...view } = generationView(ctx, record);
  return { status: 200, body: { ...view, status: inCase(view.status, ctx.behaviour.statusCase) } };
}

function historyLimit(ctx: EmulatorContext, raw: string | null): number {
  if (raw === null || raw === '') return ctx.behaviour.historyDefaultLimit;
  const n = Number(raw);
  if (!Number.isInteger(n)) throw validationError(`limit: expected an integer, got ${raw}`);
  if (n >= 1 && n <= 50) return n;
  if (ctx.behaviour.historyLimitOutOfRange === 'clamp') return Math.min(50, Math.max(1, n));
  throw validationError(`limit: must be between 1 and 50, got ${n}`);
}

export function listGenerations(ctx: EmulatorContext, call: ApiCall): Answer {
  const kind = call.query.get('kind');
  if (kind !== 'image' && kind !== 'video') {
    throw validationError(`kind: must be "image" or "video", got ${JSON.stringify(kind)}`);
  }
  const limit = historyLimit(ctx, call.query.get('limit'));
  const generations: unknown[] = [];
  const order = call.account.generationOrder;
  for (let i = order.length - 1; i >= 0 && generations.length < limit; i--) {
    const record = order[i];
    if (!record || record.kind !== kind) continue;
    const view = generationView(ctx, record);
    // Exactly the reference's fields: a client may not lean on anything else
    // (no `terminal`, `refunded`, `urls`, `creditsCost` or `error` here).
    generations.push({
      id: view.id,
      status: inCase(view.status, ctx.behaviour.historyStatusCase),
      url: view.output,
      prompt: view.prompt,
      createdAt: view.createdAt,
    });
  }
  return { status: 200, body: { kind, generations } };
}
