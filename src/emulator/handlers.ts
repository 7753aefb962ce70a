/** The handler of each endpoint id. */
import type { EndpointId } from '../contract/index.js';
import type { Answer, ApiCall } from './call.js';
import { getAccount, getModel, listModels } from './catalog.js';
import type { EmulatorContext } from './context.js';
import { createGeneration, getGeneration, listGenerations, previewCredits } from './generations.js';
import { createTraining, getTraining, listInfluencers } from './training.js';
import { presignAsset } from './uploads.js';

export function handle(
  ctx: EmulatorContext,
  call: ApiCall,
  idempotencyKey: string | undefined,
): Answer {
  const endpoint: EndpointId = call.endpoint;
  switch (endpoint) {
    case 'getAccount':
      return getAccount(ctx, call);
    case 'listInfluencers':
      return listInfluencers(ctx, call);
    case 'createTraining':
      // The router has already required the key for this endpoint.
      return createTraining(ctx, call, idempotencyKey ?? '');
    case 'getTraining':
      return getTraining(ctx, call);
    case 'listModels':
      return listModels(ctx);
    case 'getModel':
      return getModel(ctx, call);
    case 'previewCredits':
      return previewCredits(ctx, call);
    case 'createGeneration':
      return createGeneration(ctx, call, idempotencyKey);
    case 'getVideo':
      return getGeneration(ctx, call, 'video');
    case 'getImage':
      return getGeneration(ctx, call, 'image');
    case 'listGenerations':
      return listGenerations(ctx, call);
    case 'presignAsset':
      return presignAsset(ctx, call);
    default: {
      const never: never = endpoint;
      return never;
    }
  }
}
