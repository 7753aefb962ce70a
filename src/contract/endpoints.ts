/**
 * The 12 endpoints of the reference, with the rate buckets each request
 * counts against (every authenticated request counts in `requests`).
 */
import type { Bucket } from './limits.js';

export interface EndpointSpec {
  readonly method: 'GET' | 'POST';
  /** Path template relative to the base URL (which includes /api/v1). */
  readonly path: string;
  readonly buckets: readonly Bucket[];
  /** Whether the request creates something billable (needs an Idempotency-Key to retry). */
  readonly creates: boolean;
}

export const ENDPOINTS = {
  getAccount: { method: 'GET', path: '/account', buckets: ['requests'], creates: false },
  listInfluencers: { method: 'GET', path: '/influencers', buckets: ['requests'], creates: false },
  createTraining: {
    method: 'POST',
    path: '/training/jobs',
    buckets: ['requests', 'trainings'],
    creates: true,
  },
  getTraining: {
    method: 'GET',
    path: '/training/jobs/{trainingId}',
    buckets: ['requests'],
    creates: false,
  },
  listModels: { method: 'GET', path: '/models', buckets: ['requests'], creates: false },
  getModel: { method: 'GET', path: '/models/{modelId}', buckets: ['requests'], creates: false },
  previewCredits: {
    method: 'POST',
    path: '/models/{modelId}/preview-credits',
    buckets: ['requests'],
    creates: false,
  },
  createGeneration: {
    method: 'POST',
    path: '/models/{modelId}/generations',
    buckets: ['requests', 'generations'],
    creates: true,
  },
  getVideo: {
    method: 'GET',
    path: '/generations/video/{generationId}',
    buckets: ['requests'],
    creates: false,
  },
  getImage: {
    method: 'GET',
    path: '/generations/image/{generationId}',
    buckets: ['requests'],
    creates: false,
  },
  listGenerations: { method: 'GET', path: '/generations', buckets: ['requests'], creates: false },
  presignAsset: {
    method: 'POST',
    path: '/assets/presign',
    buckets: ['requests', 'uploads'],
    creates: false,
  },
} as const satisfies Record<string, EndpointSpec>;

export type EndpointId = keyof typeof ENDPOINTS;

/** Fills `{name}` placeholders with URI-encoded values. */
export function endpointPath(id: EndpointId, params: Record<string, string> = {}): string {
  return ENDPOINTS[id].path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`Expected path parameter \`${name}\` for ${id}`);
    return encodeURIComponent(value);
  });
}

export const API_PREFIX = '/api/v1';
export const API_KEY_PREFIX = 'ifk_live_';
