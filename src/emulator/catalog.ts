/** Read-only endpoints: account, models. */

import type { Answer, ApiCall } from './call.js';
import type { EmulatorContext } from './context.js';
import { notFound } from './http-error.js';
import { EMULATOR_MODELS, findModel, publicModel } from './models.js';

export function getAccount(_ctx: EmulatorContext, call: ApiCall): Answer {
  const a = call.account;
  return {
    status: 200,
    body: {
      email: a.email,
      name: a.name,
      plan: a.plan,
      subscribed: a.plan !== 'free',
      credits: a.credits,
      purchaseUrl: 'https://example.test/billing/credits',
      id: a.id,
    },
  };
}

export function listModels(ctx: EmulatorContext): Answer {
  return {
    status: 200,
    body: { models: EMULATOR_MODELS.map((m) => publicModel(m, ctx.behaviour.optionShape)) },
  };
}

export function getModel(ctx: EmulatorContext, call: ApiCall): Answer {
  const model = findModel(call.params.modelId ?? '');
  if (!model) throw notFound(`model ${call.params.modelId}`);
  return { status: 200, body: { model: publicModel(model, ctx.behaviour.optionShape) } };
}
