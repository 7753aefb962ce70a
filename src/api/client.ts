/**
 * `createClient`: one typed method per service endpoint, plus the presigned
 * upload. The only place in ibatch that talks HTTP to the service.
 */
import {
  type Account,
  AccountSchema,
  type AssetUpload,
  type AssetUploadRequest,
  AssetUploadSchema,
  type CreditQuote,
  CreditQuoteSchema,
  type GenerationHistory,
  GenerationHistorySchema,
  type GenerationRequest,
  type GenerationStatus,
  GenerationStatusSchema,
  type InfluencerList,
  InfluencerListSchema,
  type Kind,
  type Model,
  ModelEnvelopeSchema,
  type ModelList,
  ModelListSchema,
  type QueuedGeneration,
  QueuedGenerationSchema,
  type TrainingJob,
  type TrainingJobRequest,
  TrainingJobSchema,
} from '../contract/index.js';
import {
  sleep as defaultSleep,
  linkSignals,
  registerSecret,
  silentLogger,
  UsageError,
  undici,
} from '../shared/index.js';
import { USER_AGENT } from '../version.js';
import { parseBaseUrl } from './base-url.js';
import { Caller, type CallResult } from './caller.js';
import { type Created, withCreateFacts } from './created.js';
import { checkIdempotencyKey, generateIdempotencyKey } from './idempotency.js';
import { type ClientOptions, resolveRetry, resolveTimeouts } from './options.js';
import { PauseGate } from './pause-gate.js';
import type { RateLimitSnapshot } from './rate-limit.js';
import { type UploadOptions, type UploadResult, type UploadSource, uploadAsset } from './upload.js';

/** Per-call options every method accepts. */
export interface CallOptions {
  /** Cancels this call, including any retry wait. @default the client's `signal` only */
  readonly signal?: AbortSignal;
}

export interface ServiceClient {
  /** Base URL in use (with `/api/v1`, no trailing slash). */
  readonly baseUrl: string;
  /** Last `X-RateLimit-Limit`/`X-RateLimit-Remaining` seen. */
  readonly rateLimit: RateLimitSnapshot;
  getAccount(options?: CallOptions): Promise<Account>;
  listInfluencers(options?: CallOptions): Promise<InfluencerList>;
  /** `idempotencyKey` is required: trainings are charged and limited to 5 per hour. */
  createTraining(
    body: TrainingJobRequest,
    options: CallOptions & { readonly idempotencyKey: string },
  ): Promise<Created<TrainingJob>>;
  getTraining(trainingId: string, options?: CallOptions): Promise<TrainingJob>;
  listModels(options?: CallOptions): Promise<ModelList>;
  /** The model itself (unwrapped from `{ model }`). Unknown id: ApiError 404. */
  getModel(modelId: string, options?: CallOptions): Promise<Model>;
  previewCredits(
    modelId: string,
    body: GenerationRequest,
    options?: CallOptions,
  ): Promise<CreditQuote>;
  /** Without `idempotencyKey`, a random one is attached so the call can be retried safely. */
  createGeneration(
    modelId: string,
    body: GenerationRequest,
    options?: CallOptions & { readonly idempotencyKey?: string },
  ): Promise<Created<QueuedGeneration>>;
  getGeneration(kind: Kind, generationId: string, options?: CallOptions): Promise<GenerationStatus>;
  listGenerations(
    kind: Kind,
    options?: CallOptions & { readonly limit?: number },
  ): Promise<GenerationHistory>;
  presignAsset(request: AssetUploadRequest, options?: CallOptions): Promise<AssetUpload>;
  /** PUTs the bytes to `presign.uploadUrl` with exactly `presign.headers`, never the key. */
  upload(
    presign: AssetUpload,
    source: UploadSource,
    options?: UploadOptions,
  ): Promise<UploadResult>;
  /** Closes the keep-alive connections. */
  close(): Promise<void>;
}

export function createClient(options: ClientOptions): ServiceClient {
  const apiKey = checkApiKey(options.apiKey);
  registerSecret(apiKey);
  const baseUrl = parseBaseUrl(options.baseUrl);
  const limits = resolveTimeouts(options);
  const retry = resolveRetry(options);
  const logger = options.logger ?? silentLogger();
  const sleep = options.sleep ?? defaultSleep;
  const connect = { timeout: limits.connectTimeoutMs };
  const { Agent, Pool } = undici();
  const pool = new Pool(baseUrl.origin, {
    connections: limits.connections,
    connect,
    keepAliveTimeout: 30_000,
  });
  // A separate dispatcher for uploads: it never sees the service's headers.
  const uploads = new Agent({ connections: limits.connections, connect });
  const caller = new Caller({
    dispatcher: pool,
    baseUrl,
    headers: {
      authorization: `Bearer ${apiKey}`,
      'user-agent': USER_AGENT,
      accept: 'application/json',
    },
    gate: options.gate ?? new PauseGate(),
    logger,
    onEvent: options.onEvent,
    signal: options.signal,
    limits,
    retry,
    sleep,
  });
  const value = async <T>(result: Promise<CallResult<T>>): Promise<T> => (await result).value;
  const created = async <T extends object>(
    key: string,
    result: Promise<CallResult<T>>,
  ): Promise<Created<T>> => {
    const { value: body, status, requestId } = await result;
    return withCreateFacts(body, {
      replayed: status === 200,
      idempotencyKey: key,
      httpStatus: status,
      requestId,
    });
  };

  return {
    baseUrl: baseUrl.href.replace(/\/$/, ''),
    get rateLimit() {
      return caller.rateLimit;
    },
    getAccount: (o) =>
      value(caller.call({ endpoint: 'getAccount', schema: AccountSchema, signal: o?.signal })),
    listInfluencers: (o) =>
      value(
        caller.call({
          endpoint: 'listInfluencers',
          schema: InfluencerListSchema,
          signal: o?.signal,
        }),
      ),
    createTraining: (body, o) => {
      const key = checkIdempotencyKey(o.idempotencyKey);
      return created(
        key,
        caller.call({
          endpoint: 'createTraining',
          body,
          idempotencyKey: key,
          schema: TrainingJobSchema,
          signal: o.signal,
        }),
      );
    },
    getTraining: (trainingId, o) =>
      value(
        caller.call({
          endpoint: 'getTraining',
          params: { trainingId },
          schema: TrainingJobSchema,
          signal: o?.signal,
        }),
      ),
    listModels: (o) =>
      value(caller.call({ endpoint: 'listModels', schema: ModelListSchema, signal: o?.signal })),
    getModel: async (modelId, o) =>
      (
        await value(
          caller.call({
            endpoint: 'getModel',
            params: { modelId },
            schema: ModelEnvelopeSchema,
            signal: o?.signal,
          }),
        )
      ).model,
    previewCredits: (modelId, body, o) =>
      value(
        caller.call({
          endpoint: 'previewCredits',
          params: { modelId },
          body,
          schema: CreditQuoteSchema,
          signal: o?.signal,
        }),
      ),
    createGeneration: (modelId, body, o) => {
      const key = checkIdempotencyKey(o?.idempotencyKey ?? generateIdempotencyKey());
      return created(
        key,
        caller.call({
          endpoint: 'createGeneration',
          params: { modelId },
          body,
          idempotencyKey: key,
          schema: QueuedGenerationSchema,
          signal: o?.signal,
        }),
      );
    },
    getGeneration: (kind, generationId, o) =>
      value(
        caller.call({
          endpoint: kind === 'video' ? 'getVideo' : 'getImage',
          params: { generationId },
          schema: GenerationStatusSchema,
          signal: o?.signal,
        }),
      ),
    listGenerations: (kind, o) =>
      value(
        caller.call({
          endpoint: 'listGenerations',
          query: { kind, limit: o?.limit },
          schema: GenerationHistorySchema,
          signal: o?.signal,
        }),
      ),
    presignAsset: (request, o) =>
      value(
        caller.call({
          endpoint: 'presignAsset',
          body: request,
          schema: AssetUploadSchema,
          signal: o?.signal,
        }),
      ),
    upload: async (presign, source, o) => {
      const linked = linkSignals([options.signal, o?.signal]);
      try {
        return await uploadAsset(
          { dispatcher: uploads, logger, onEvent: options.onEvent, limits, retry, sleep },
          presign,
          source,
          { ...o, signal: linked.signal },
        );
      } finally {
        linked.release();
      }
    },
    close: async () => {
      await Promise.all([pool.close(), uploads.close()]);
    },
  };
}

function checkApiKey(apiKey: string | undefined): string {
  if (typeof apiKey !== 'string' || apiKey.trim() === '') {
    throw new UsageError('Expected an API key: set IBATCH_API_KEY (or use --emulator)');
  }
  // A header value with whitespace or control characters would corrupt the request.
  if (!/^[\x21-\x7e]+$/.test(apiKey)) {
    throw new UsageError(
      'Expected the API key to be one word of visible ASCII characters; check IBATCH_API_KEY',
    );
  }
  return apiKey;
}
