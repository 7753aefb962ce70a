/**
 * Server-side prices: per image copy, or per second of video, times an
 * optional multiplier chosen by an enum field (resolution, quality).
 */
import type { GenerationRequest } from '../contract/index.js';
import type { EmulatorModel } from './model-types.js';
import { findModel } from './models.js';

export interface Price {
  /** Total credits of the request (all copies). */
  cost: number;
  /** Credits of one output (one copy); `cost / copies`. */
  perOutput: number;
  description: string;
}

/** Input value or the field's default. */
export function inputValue(
  model: EmulatorModel,
  input: Record<string, unknown>,
  name: string,
): unknown {
  return input[name] ?? model.fields.find((f) => f.name === name)?.default;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** Price of an already validated request. */
export function priceModel(model: EmulatorModel, request: GenerationRequest): Price {
  const { pricing } = model;
  const factorKey = pricing.multiplierField
    ? String(inputValue(model, request.input, pricing.multiplierField))
    : undefined;
  const factor = factorKey !== undefined ? (pricing.multipliers?.[factorKey] ?? 1) : 1;
  const factorText = factor !== 1 ? ` x ${factor} (${factorKey})` : '';
  if (pricing.unit === 'image') {
    const copies = request.copies ?? 1;
    const perOutput = round2(pricing.base * factor);
    return {
      cost: round2(perOutput * copies),
      perOutput,
      description: `${pricing.base} credits per image${factorText} x ${copies} cop${copies === 1 ? 'y' : 'ies'}`,
    };
  }
  if (pricing.unit === 'second') {
    const seconds = Number(inputValue(model, request.input, pricing.durationField ?? 'duration'));
    const cost = round2(pricing.base * seconds * factor);
    return {
      cost,
      perOutput: cost,
      description: `${pricing.base} credits per second x ${seconds}s${factorText}`,
    };
  }
  const cost = round2(pricing.base * factor);
  return { cost, perOutput: cost, description: `${pricing.base} credits per clip${factorText}` };
}

/** Price of a request to `modelId`; throws for an unknown model. Inputs are not validated. */
export function priceOf(modelId: string, request: GenerationRequest): Price {
  const model = findModel(modelId);
  if (!model) throw new Error(`Expected a model id of EMULATOR_MODELS, got ${modelId}`);
  return priceModel(model, request);
}

/**
 * Cost of one training job (server-defined; the client cannot submit a
 * price). The service's reference names no training price: this is the
 * emulator's own choice, equal to ibatch's assumed estimate
 * (src/plan/training-price.ts) so that runs against it reserve what they pay.
 */
export const TRAINING_COST = 300;
