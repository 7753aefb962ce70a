/**
 * What each client call does, in words a person reads at the start of an
 * error message ("creating a generation on flux-portrait: the service
 * rejected the request ..."). The endpoint id itself (`createGeneration`)
 * stays on the error (`.endpoint`) and in the structured log fields.
 */
import type { EndpointId } from '../contract/index.js';

/** Endpoint ids plus the presigned upload PUT, which is not a service endpoint. */
export type ClientOperation = EndpointId | 'upload';

const WORDS: Readonly<Record<ClientOperation, (p: Readonly<Record<string, string>>) => string>> = {
  getAccount: () => 'reading the account',
  listInfluencers: () => "listing the account's influencers",
  createTraining: () => 'starting an influencer training',
  getTraining: (p) => `checking training ${p.trainingId ?? ''}`.trimEnd(),
  listModels: () => 'listing the models',
  getModel: (p) => `reading model ${p.modelId ?? ''}`.trimEnd(),
  previewCredits: (p) => `quoting a generation on ${p.modelId ?? 'a model'}`,
  createGeneration: (p) => `creating a generation on ${p.modelId ?? 'a model'}`,
  getVideo: (p) => `checking video generation ${p.generationId ?? ''}`.trimEnd(),
  getImage: (p) => `checking image generation ${p.generationId ?? ''}`.trimEnd(),
  listGenerations: () => 'listing recent generations',
  presignAsset: () => 'preparing an upload',
  upload: () => 'uploading a file',
};

/** "creating a generation on MODEL" for `createGeneration` with `{ modelId: MODEL }`. */
export function describeOperation(
  operation: ClientOperation,
  params: Readonly<Record<string, string>> = {},
): string {
  return WORDS[operation](params);
}
