/**
 * The service's wire contract (the service reference) as zod schemas.
 *
 * Shared by the client (which parses responses with them) and the emulator
 * (which validates requests and builds responses with them), so the two can
 * never disagree about a field.
 *
 * Conventions:
 * - Request bodies are `strictObject`: the reference says "no other properties
 *   allowed", so an unknown key is a 400.
 * - Response bodies are `looseObject`: the service may add fields, and the
 *   client keeps what it does not know instead of failing.
 * - Status strings are plain strings in responses: their full vocabulary is
 *   "not shown", and the client compares them case-insensitively. The booleans
 *   (`terminal`, `ready`, `refunded`) are the source of truth.
 */
import { z } from 'zod';
import { LIMITS } from './limits.js';

export const KindSchema = z.enum(['image', 'video']);
export type Kind = z.infer<typeof KindSchema>;

// ---------------------------------------------------------------- account

export const AccountSchema = z.looseObject({
  email: z.string().nullable().optional(),
  name: z.string().nullable().optional(),
  plan: z.string(),
  subscribed: z.boolean(),
  credits: z.number(),
  purchaseUrl: z.string(),
});
export type Account = z.infer<typeof AccountSchema>;

// ----------------------------------------------------------- influencers

export const InfluencerEntrySchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  username: z.string(),
  ready: z.boolean(),
  status: z.string(),
});

export const InfluencerListSchema = z.looseObject({
  total: z.number().int(),
  ready: z.number().int(),
  characters: z.array(InfluencerEntrySchema),
});
export type InfluencerList = z.infer<typeof InfluencerListSchema>;

// -------------------------------------------------------------- training

export const TrainingStyleSchema = z.enum(['realistic', 'anime']);
export const GenderSchema = z.enum(['male', 'female']);

export const TrainingJobRequestSchema = z.strictObject({
  name: z.string().min(1).max(LIMITS.trainingNameMax),
  username: z
    .string()
    .min(LIMITS.usernameMin)
    .max(LIMITS.usernameMax)
    .regex(/^[a-zA-Z0-9_]+$/)
    .optional(),
  style: TrainingStyleSchema,
  gender: GenderSchema,
  assetUrls: z.array(z.url()).min(1).max(LIMITS.trainingImagesMax),
  consentAcknowledged: z.literal(true),
});
export type TrainingJobRequest = z.infer<typeof TrainingJobRequestSchema>;

export const TrainingJobSchema = z.looseObject({
  trainingId: z.string(),
  influencerId: z.string(),
  // An enum in the reference, but kept as a string so a new state does not
  // break polling; `terminal`/`ready`/`refunded` decide what happens.
  status: z.string(),
  ready: z.boolean(),
  terminal: z.boolean(),
  refunded: z.boolean(),
  creditsCost: z.number(),
  loraUrl: z.string().nullable(),
});
export type TrainingJob = z.infer<typeof TrainingJobSchema>;

// ---------------------------------------------------------------- models

export const ModelFieldSchema = z.looseObject({
  name: z.string(),
  type: z.string(),
  label: z.string().optional(),
  helpText: z.string().optional(),
  required: z.boolean(),
  default: z.unknown().optional(),
  min: z.number().optional(),
  max: z.number().optional(),
  maxItems: z.number().int().optional(),
  // Beyond the reference's Field (which allows more properties): bounds a
  // service may state so that a client can check them before spending.
  /** Text: the most characters. */
  maxLength: z.number().int().nonnegative().optional(),
  /** Number: whole numbers only. */
  integer: z.boolean().optional(),
  /** Number: values inside [min, max] that are still refused (seed 0). */
  exclude: z.array(z.number()).optional(),
  // Shape of each option is "not shown": the emulator uses {value, label}; the
  // client also accepts bare strings/numbers (see contract/model-options.ts).
  options: z.array(z.unknown()).optional(),
});
export type ModelField = z.infer<typeof ModelFieldSchema>;

export const ModelSchema = z.looseObject({
  id: z.string(),
  kind: KindSchema,
  label: z.string(),
  vendor: z.string(),
  description: z.string(),
  inferenceTime: z.string().optional(),
  category: z.string().optional(),
  useCases: z.array(z.string()).optional(),
  capabilities: z.record(z.string(), z.unknown()).optional(),
  fields: z.array(ModelFieldSchema),
});
export type Model = z.infer<typeof ModelSchema>;

export const ModelListSchema = z.looseObject({ models: z.array(ModelSchema) });
export type ModelList = z.infer<typeof ModelListSchema>;

export const ModelEnvelopeSchema = z.looseObject({ model: ModelSchema });

// ----------------------------------------------------------- generations

export const GenerationRequestSchema = z.strictObject({
  input: z.record(z.string(), z.unknown()),
  copies: z.number().int().min(1).max(LIMITS.copiesMax).optional(),
  influencerId: z.uuid().optional(),
  generationId: z.uuid().optional(),
});
export type GenerationRequest = z.infer<typeof GenerationRequestSchema>;

export const CreditQuoteSchema = z.looseObject({
  modelId: z.string(),
  credits: z.looseObject({ cost: z.number(), description: z.string() }),
});
export type CreditQuote = z.infer<typeof CreditQuoteSchema>;

export const QueuedGenerationSchema = z.looseObject({
  status: z.string(),
  kind: KindSchema,
  modelId: z.string(),
  ids: z.array(z.string()).min(1),
  taskId: z.string().optional(),
  creditsCost: z.number(),
});
export type QueuedGeneration = z.infer<typeof QueuedGenerationSchema>;

export const GenerationStatusSchema = z.looseObject({
  id: z.string(),
  kind: KindSchema,
  modelId: z.string().nullable().optional(),
  status: z.string(),
  ready: z.boolean(),
  terminal: z.boolean(),
  refunded: z.boolean(),
  url: z.string().nullable().optional(),
  urls: z.array(z.string()).optional(),
  creditsCost: z.number().nullable().optional(),
  error: z.string().nullable().optional(),
});
export type GenerationStatus = z.infer<typeof GenerationStatusSchema>;

export const HistoryEntrySchema = z.looseObject({
  id: z.string(),
  status: z.string(),
  // Required by the reference, but an in-flight entry has no output yet:
  // tolerate absence and null rather than reject the whole page.
  url: z.string().nullable().optional(),
  prompt: z.string().nullable().optional(),
  createdAt: z.string(),
});

export const GenerationHistorySchema = z.looseObject({
  kind: KindSchema,
  generations: z.array(HistoryEntrySchema),
});
export type GenerationHistory = z.infer<typeof GenerationHistorySchema>;

// ---------------------------------------------------------------- assets

export const AssetUploadRequestSchema = z.strictObject({
  mimeType: z.string().min(1),
  sizeBytes: z.number().int().min(1).max(LIMITS.uploadMaxBytes),
});
export type AssetUploadRequest = z.infer<typeof AssetUploadRequestSchema>;

export const AssetUploadSchema = z.looseObject({
  uploadUrl: z.string(),
  assetUrl: z.string(),
  expiresInSeconds: z.number().int(),
  method: z.string(),
  headers: z.record(z.string(), z.string()),
  browserUploadUrl: z.string(),
});
export type AssetUpload = z.infer<typeof AssetUploadSchema>;

// ---------------------------------------------------------------- errors

export const ErrorBodySchema = z.looseObject({
  error: z.looseObject({
    code: z.string(),
    message: z.string(),
    details: z.unknown().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
