/**
 * Validates a generation request against a model contract: unknown input
 * fields, required fields, types, bounds, enum options, media URLs (owned
 * assets or own outputs, or any URL when `mediaInputs` is `any-url`), and the
 * top-level `copies`/`influencerId`/`generationId` rules. The first problem
 * is reported with the field named in the message.
 *
 * `resolveReferences: false` (preview-credits, unless
 * `behaviour.previewChecksReferences`) checks the shape only: media URLs are
 * not looked up as owned assets, and `influencerId`/`generationId` are not
 * looked up at all. Prices never depend on them, so a client can quote work
 * whose inputs are made at run time.
 */
import type { GenerationRequest } from '../contract/index.js';
import { type EmulatorContext, ownedMedia } from './context.js';
import { notFound, validationError } from './http-error.js';
import type { EmulatorField, EmulatorModel } from './model-types.js';
import type { AccountState } from './state.js';

const MEDIA_TYPES = new Set(['image', 'video', 'audio']);

/** Where the references of a request (media, influencer, source generation) are resolved. */
interface Scope {
  ctx: EmulatorContext;
  account: AccountState;
  /** Look references up (existence, ownership, readiness), or check their shape only. */
  resolveReferences: boolean;
}

function checkMedia(scope: Scope, field: EmulatorField, value: unknown): void {
  const { ctx, account } = scope;
  const path = `input.${field.name}`;
  const list = Array.isArray(value) ? value : [value];
  if (Array.isArray(value)) {
    const max = field.maxItems ?? 1;
    if (max <= 1) throw validationError(`${path}: expected one URL, got a list`);
    if (value.length < 1 || value.length > max) {
      throw validationError(`${path}: expected 1 to ${max} URLs, got ${value.length}`);
    }
  }
  list.forEach((item, i) => {
    const where = Array.isArray(value) ? `${path}[${i}]` : path;
    if (typeof item !== 'string' || !/^https?:\/\//.test(item)) {
      throw validationError(`${where}: expected an http(s) URL`);
    }
    if (!scope.resolveReferences || ctx.behaviour.mediaInputs === 'any-url') return;
    const family = ownedMedia(ctx, account, item);
    if (family === undefined) {
      throw validationError(`${where}: not an uploaded asset or output of this account`);
    }
    if (family !== field.type) {
      throw validationError(`${where}: expected ${field.type} media, got ${family}`);
    }
  });
}

function checkField(scope: Scope, field: EmulatorField, value: unknown): void {
  const path = `input.${field.name}`;
  switch (field.type) {
    case 'text':
      if (typeof value !== 'string') throw validationError(`${path}: expected a string`);
      if (field.required && value.trim() === '')
        throw validationError(`${path}: must not be empty`);
      if (field.maxLength !== undefined && value.length > field.maxLength)
        throw validationError(`${path}: at most ${field.maxLength} characters`);
      return;
    case 'number': {
      if (typeof value !== 'number' || !Number.isFinite(value)) {
        throw validationError(`${path}: expected a number`);
      }
      if (field.integer && !Number.isInteger(value)) {
        throw validationError(`${path}: expected an integer, got ${value}`);
      }
      const outOfRange =
        (field.min !== undefined && value < field.min) ||
        (field.max !== undefined && value > field.max) ||
        field.exclude?.includes(value);
      if (outOfRange) {
        throw validationError(
          `${path}: must be between ${field.min ?? '-inf'} and ${field.max ?? 'inf'}${
            field.exclude ? ` (not ${field.exclude.join(', ')})` : ''
          }, got ${value}`,
        );
      }
      return;
    }
    case 'boolean':
      if (typeof value !== 'boolean') throw validationError(`${path}: expected a boolean`);
      return;
    case 'enum':
      if (!field.options?.some((o) => o.value === value)) {
        const allowed = field.options?.map((o) => JSON.stringify(o.value)).join(', ');
        throw validationError(`${path}: must be one of ${allowed}, got ${JSON.stringify(value)}`);
      }
      return;
    default:
      if (MEDIA_TYPES.has(field.type)) checkMedia(scope, field, value);
  }
}

/** The influencer exists in this account (404) and its training succeeded (400). */
function checkInfluencer(ctx: EmulatorContext, account: AccountState, id: string): void {
  const influencer = account.influencers.get(id);
  if (!influencer) throw notFound('influencerId: influencer');
  const training = account.trainings.get(influencer.trainingId);
  if (!training || training.fails || ctx.now() < training.terminalAt) {
    throw validationError('influencerId: influencer is not ready');
  }
}

/** The source is an image generation of this account (404) that has succeeded (400). */
function checkSource(ctx: EmulatorContext, account: AccountState, id: string): void {
  const source = account.generations.get(id);
  if (source?.kind !== 'image') throw notFound('generationId: image generation');
  if (source.outcome !== 'success' || ctx.now() < source.terminalAt) {
    throw validationError('generationId: source generation has not succeeded');
  }
}

export function validateGenerationRequest(
  ctx: EmulatorContext,
  account: AccountState,
  model: EmulatorModel,
  request: GenerationRequest,
  options: { resolveReferences: boolean } = { resolveReferences: true },
): void {
  const scope: Scope = { ctx, account, resolveReferences: options.resolveReferences };
  const known = new Set(model.fields.map((f) => f.name));
  for (const name of Object.keys(request.input)) {
    if (!known.has(name))
      throw validationError(`input.${name}: unknown field for model ${model.id}`);
  }
  for (const field of model.fields) {
    const value = request.input[field.name];
    if (value === undefined || value === null) {
      if (field.required) throw validationError(`input.${field.name}: is required`);
      continue;
    }
    checkField(scope, field, value);
  }
  const caps = model.capabilities;
  if (request.copies !== undefined && request.copies > 1 && !caps.copies) {
    throw validationError(`copies: model ${model.id} makes one output (image models only)`);
  }
  if (request.copies !== undefined && request.copies > caps.maxCopies) {
    throw validationError(`copies: at most ${caps.maxCopies} for model ${model.id}`);
  }
  if (request.influencerId !== undefined) {
    if (!caps.influencer)
      throw validationError(`influencerId: model ${model.id} does not support influencers`);
    if (scope.resolveReferences) checkInfluencer(ctx, account, request.influencerId);
  }
  if (request.generationId !== undefined) {
    if (!caps.imageToVideo)
      throw validationError(`generationId: model ${model.id} does not take a source generation`);
    if (scope.resolveReferences) checkSource(ctx, account, request.generationId);
  }
  // Served in the contract (`capabilities.needsOneOf`) so a client can check it.
  const given = (name: string) =>
    name === 'generationId'
      ? request.generationId !== undefined
      : request.input[name] !== undefined && request.input[name] !== null;
  for (const group of caps.needsOneOf ?? []) {
    if (!group.some(given)) {
      throw validationError(`input.${group[0]}: one of ${group.join(', ')} is required`);
    }
  }
}
