/**
 * The emulator's model registry. `EMULATOR_MODELS` is what `GET /models`
 * serves (after `publicModel` strips the internal keys); `pricing` and
 * `latencyMs` are emulator-internal.
 *
 * `capabilities` (a "not shown" object in the reference) always carries:
 * `influencer` (accepts `influencerId`), `imageToVideo` (accepts
 * `generationId`), `copies` (accepts `copies` > 1) and `maxCopies`; and
 * `needsOneOf` where a request needs one of several inputs (groups of input
 * field names, `generationId` standing for the top-level field).
 */
import type { EmulatorField, EmulatorModel } from './model-types.js';

const opts = (...values: Array<string | number>) =>
  values.map((value) => ({ value, label: String(value) }));

/**
 * The emulator's bound on text inputs (an assumption: the reference gives no
 * figure). Served in the contract like every bound it enforces.
 */
const TEXT_MAX_LENGTH = 4000;
const prompt: EmulatorField = {
  name: 'prompt',
  type: 'text',
  label: 'Prompt',
  required: true,
  maxLength: TEXT_MAX_LENGTH,
};
const seed: EmulatorField = {
  name: 'seed',
  type: 'number',
  label: 'Seed',
  helpText: '-1 (random seed) or 1 to 2147483647; reusing a seed reproduces a result',
  required: false,
  default: -1,
  min: -1,
  max: 2147483647,
  integer: true,
  exclude: [0],
};
const aspect = (values: string[], dflt: string): EmulatorField => ({
  name: 'aspectRatio',
  type: 'enum',
  label: 'Aspect ratio',
  required: false,
  default: dflt,
  options: opts(...values),
});
const imageCaps = (influencer: boolean) => ({
  influencer,
  imageToVideo: false,
  copies: true,
  maxCopies: 4,
});
const videoCaps = (imageToVideo: boolean, extra: Record<string, unknown> = {}) => ({
  influencer: false,
  imageToVideo,
  copies: false,
  maxCopies: 1,
  ...extra,
});
const RESOLUTION_MULTIPLIERS = { '480p': 0.6, '720p': 1, '1080p': 1.5 };

export const EMULATOR_MODELS: readonly EmulatorModel[] = [
  {
    id: 'flux-portrait',
    kind: 'image',
    label: 'Flux Portrait',
    vendor: 'Black Forest Labs',
    description: 'Photoreal text-to-image portraits; supports trained influencers.',
    inferenceTime: '~10s',
    category: 'text-to-image',
    useCases: ['portraits', 'lifestyle', 'influencer'],
    capabilities: imageCaps(true),
    fields: [
      prompt,
      {
        name: 'negativePrompt',
        type: 'text',
        label: 'Negative prompt',
        required: false,
        maxLength: TEXT_MAX_LENGTH,
      },
      aspect(['1:1', '4:5', '9:16', '16:9'], '1:1'),
      { name: 'guidance', type: 'number', required: false, default: 3.5, min: 1, max: 20 },
      seed,
    ],
    pricing: { unit: 'image', base: 4 },
    latencyMs: [6000, 14_000],
  },
  {
    id: 'sdxl-lite',
    kind: 'image',
    label: 'SDXL Lite',
    vendor: 'Stability AI',
    description: 'Fast, cheap text-to-image drafts.',
    inferenceTime: '~5s',
    category: 'text-to-image',
    useCases: ['drafts', 'moodboards'],
    capabilities: imageCaps(false),
    fields: [
      prompt,
      {
        name: 'style',
        type: 'enum',
        required: false,
        default: 'photo',
        options: opts('photo', 'anime', 'cinematic'),
      },
      {
        name: 'steps',
        type: 'number',
        required: false,
        default: 20,
        min: 4,
        max: 50,
        integer: true,
      },
    ],
    pricing: { unit: 'image', base: 2 },
    latencyMs: [3000, 7000],
  },
  {
    id: 'ideogram-influencer',
    kind: 'image',
    label: 'Ideogram Influencer',
    vendor: 'Ideogram',
    description: 'Text-to-image with quality tiers; supports trained influencers.',
    inferenceTime: '~20s',
    category: 'text-to-image',
    useCases: ['ads', 'influencer'],
    capabilities: imageCaps(true),
    fields: [
      prompt,
      aspect(['1:1', '9:16', '16:9', '3:4', '4:3'], '9:16'),
      {
        name: 'quality',
        type: 'enum',
        required: false,
        default: 'standard',
        options: [
          { value: 'standard', label: 'Standard' },
          { value: 'hd', label: 'HD (2x price)' },
        ],
      },
      { name: 'magicPrompt', type: 'boolean', required: false, default: true },
    ],
    pricing: {
      unit: 'image',
      base: 6,
      multiplierField: 'quality',
      multipliers: { standard: 1, hd: 2 },
    },
    latencyMs: [12_000, 28_000],
  },
  {
    id: 'nano-edit',
    kind: 'image',
    label: 'Nano Edit',
    vendor: 'Google',
    description: 'Edits images from a prompt and up to 4 reference images.',
    inferenceTime: '~15s',
    category: 'image-edit',
    useCases: ['retouch', 'outfit swap', 'background'],
    capabilities: { ...imageCaps(false), edit: true },
    fields: [
      prompt,
      {
        name: 'image',
        type: 'image',
        label: 'Reference images',
        helpText: 'one URL or a list of up to 4 URLs',
        required: true,
        maxItems: 4,
      },
      { name: 'strength', type: 'number', required: false, default: 0.7, min: 0, max: 1 },
    ],
    pricing: { unit: 'image', base: 5 },
    latencyMs: [8000, 20_000],
  },
  {
    id: 'veo-lite-audio',
    kind: 'video',
    label: 'Veo Lite (native audio)',
    vendor: 'Google',
    description: 'Text/frames-to-video with native audio.',
    inferenceTime: '~90s',
    category: 'text-to-video',
    useCases: ['reels', 'ads'],
    capabilities: videoCaps(false, { audio: true }),
    fields: [
      prompt,
      {
        name: 'resolution',
        type: 'enum',
        required: false,
        default: '720p',
        options: opts('480p', '720p', '1080p'),
      },
      aspect(['16:9', '9:16', '1:1', '4:3', '3:4'], '16:9'),
      {
        name: 'duration',
        type: 'number',
        required: false,
        default: 5,
        min: 2,
        max: 30,
        helpText: 'seconds',
      },
      { name: 'enable_prompt_expansion', type: 'boolean', required: false, default: false },
      { name: 'generateAudio', type: 'boolean', required: false, default: true },
      seed,
      { name: 'startFrameUrl', type: 'image', required: false },
      { name: 'endFrameUrl', type: 'image', required: false },
    ],
    pricing: {
      unit: 'second',
      base: 8,
      durationField: 'duration',
      multiplierField: 'resolution',
      multipliers: RESOLUTION_MULTIPLIERS,
    },
    latencyMs: [60_000, 120_000],
  },
  {
    id: 'seedance-fast',
    kind: 'video',
    label: 'Seedance Fast',
    vendor: 'ByteDance',
    description: 'Cheap silent text-to-video.',
    inferenceTime: '~40s',
    category: 'text-to-video',
    useCases: ['drafts', 'b-roll'],
    capabilities: videoCaps(false),
    fields: [
      prompt,
      {
        name: 'resolution',
        type: 'enum',
        required: false,
        default: '480p',
        options: opts('480p', '720p'),
      },
      {
        name: 'duration',
        type: 'number',
        required: false,
        default: 5,
        min: 3,
        max: 12,
        integer: true,
      },
    ],
    pricing: {
      unit: 'second',
      base: 3,
      durationField: 'duration',
      multiplierField: 'resolution',
      multipliers: RESOLUTION_MULTIPLIERS,
    },
    latencyMs: [25_000, 55_000],
  },
  {
    id: 'kling-i2v',
    kind: 'video',
    label: 'Kling Image-to-Video',
    vendor: 'Kuaishou',
    description: 'Animates a source image: pass `generationId` or `input.imageUrl`.',
    inferenceTime: '~60s',
    category: 'image-to-video',
    useCases: ['animate portraits'],
    capabilities: videoCaps(true, { needsOneOf: [['imageUrl', 'generationId']] }),
    fields: [
      prompt,
      { name: 'imageUrl', type: 'image', required: false, helpText: 'or pass generationId' },
      {
        name: 'duration',
        type: 'enum',
        required: false,
        default: 5,
        options: [
          { value: 5, label: '5 seconds' },
          { value: 10, label: '10 seconds' },
        ],
      },
      {
        name: 'resolution',
        type: 'enum',
        required: false,
        default: '720p',
        options: opts('720p', '1080p'),
      },
    ],
    pricing: {
      unit: 'second',
      base: 6,
      durationField: 'duration',
      multiplierField: 'resolution',
      multipliers: RESOLUTION_MULTIPLIERS,
    },
    latencyMs: [40_000, 80_000],
  },
  {
    id: 'motion-transfer',
    kind: 'video',
    label: 'Motion Transfer',
    vendor: 'Runway',
    description: 'Motion control: moves a character image like a reference video.',
    inferenceTime: '~75s',
    category: 'motion-control',
    useCases: ['dance trends', 'gestures'],
    capabilities: videoCaps(false, { motionControl: true }),
    fields: [
      { name: 'image', type: 'image', label: 'Character image', required: true },
      { name: 'referenceVideo', type: 'video', label: 'Motion reference', required: true },
      { name: 'prompt', type: 'text', required: false, maxLength: TEXT_MAX_LENGTH },
      { name: 'duration', type: 'number', required: false, default: 5, min: 3, max: 15 },
    ],
    pricing: { unit: 'second', base: 10, durationField: 'duration' },
    latencyMs: [50_000, 100_000],
  },
  {
    id: 'lipsync-pro',
    kind: 'video',
    label: 'Lip-Sync Pro',
    vendor: 'Sync Labs',
    description: 'Lip-syncs a face image or video to an audio track (provide image or video).',
    inferenceTime: '~45s',
    category: 'lip-sync',
    useCases: ['talking head', 'dubbing'],
    capabilities: videoCaps(false, { lipSync: true, needsOneOf: [['image', 'video']] }),
    fields: [
      { name: 'image', type: 'image', required: false, helpText: 'face image (or video)' },
      { name: 'video', type: 'video', required: false, helpText: 'face video (or image)' },
      { name: 'audio', type: 'audio', required: true },
      { name: 'maxDuration', type: 'number', required: false, default: 10, min: 1, max: 60 },
    ],
    pricing: { unit: 'second', base: 5, durationField: 'maxDuration' },
    latencyMs: [30_000, 60_000],
  },
];

const BY_ID = new Map(EMULATOR_MODELS.map((m) => [m.id, m]));

export function findModel(id: string): EmulatorModel | undefined {
  return BY_ID.get(id);
}

/**
 * The model as `GET /models` serves it (internal keys removed). Every bound
 * `validateGenerationRequest` enforces is in it (`maxLength`, `integer`,
 * `exclude` beside the reference's `min`/`max`/`maxItems`), so a client can
 * refuse what the service would before spending.
 */
export function publicModel(model: EmulatorModel, optionShape: 'object' | 'bare'): unknown {
  const { pricing: _p, latencyMs: _l, ...rest } = model;
  return {
    ...rest,
    fields: model.fields.map(({ options, ...field }) =>
      options === undefined
        ? field
        : { ...field, options: optionShape === 'bare' ? options.map((o) => o.value) : options },
    ),
  };
}
