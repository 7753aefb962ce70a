/**
 * The one quoting rule, shared by `plan` and a run's budget reservations.
 *
 * A preview is free but costs a request from the account's budget of 120 a
 * minute, as much as a create. Prices depend on a model's settings (copies,
 * duration, resolution...), not on free text, on which media file is chosen
 * or on the source generation and influencer: requests that differ only there
 * belong to one price class and share one quote. The first request of each
 * class is quoted as it is (the run's real, resolved request; the plan's
 * request with stand-ins), so the service validates a real request.
 */
import type { CreditQuote, GenerationRequest } from '../contract/index.js';
import { MEDIA_FIELD_TYPES, type ModelCatalog } from '../job/index.js';
import { canonicalJson } from '../shared/index.js';

/** The one client call quoting needs (read-only, never charges). */
export interface PreviewClient {
  previewCredits(
    modelId: string,
    body: GenerationRequest,
    options?: { readonly signal?: AbortSignal },
  ): Promise<CreditQuote>;
}

/** Field types whose value never changes a price (only its presence could). */
const PRICE_NEUTRAL_TYPES: ReadonlySet<string> = new Set(['text']);

/**
 * The price class of a request: the request with what does not change a
 * price taken out. Free text is dropped; media and the source generation are
 * counted, not identified (the plan quotes a stand-in for both, the run the
 * real ones); `influencerId` is left out (the plan cannot know a job-local
 * influencer's id, and no price depends on it). Fields of unknown models or
 * of types ibatch does not know count with their value (a safe over-quote).
 */
export function priceClassOf(
  models: ModelCatalog,
  modelId: string,
  request: GenerationRequest,
): string {
  const fields = models.get(modelId)?.fields ?? [];
  const input: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request.input)) {
    const type = fields.find((f) => f.name === name)?.type;
    if (type !== undefined && PRICE_NEUTRAL_TYPES.has(type)) continue;
    if (type !== undefined && MEDIA_FIELD_TYPES.has(type)) {
      input[name] = Array.isArray(value) ? value.length : value === undefined ? 0 : 1;
      continue;
    }
    input[name] = value;
  }
  return canonicalJson({
    m: modelId,
    i: input,
    c: request.copies ?? 1,
    g: request.generationId !== undefined,
  });
}

/**
 * Quotes by price class: one preview call per class, concurrent callers of a
 * class share the call in flight. A failed quote is not kept: the next
 * request of its class asks again.
 */
export class QuoteCache {
  readonly #cache = new Map<string, Promise<number>>();
  #calls = 0;

  constructor(
    private readonly client: PreviewClient,
    private readonly models: ModelCatalog,
  ) {}

  /** Preview calls made so far (one per price class, plus retries of failed ones). */
  get calls(): number {
    return this.#calls;
  }

  /** The cost of `request`, quoted once per price class. */
  quote(modelId: string, request: GenerationRequest, signal?: AbortSignal): Promise<number> {
    return this.quoteClass(this.priceClass(modelId, request), modelId, request, signal);
  }

  /** `quote` for a caller that already computed `priceClass` (the plan groups first). */
  quoteClass(
    priceClass: string,
    modelId: string,
    request: GenerationRequest,
    signal?: AbortSignal,
  ): Promise<number> {
    let cost = this.#cache.get(priceClass);
    if (!cost) {
      this.#calls += 1;
      cost = this.client
        .previewCredits(modelId, request, signal ? { signal } : {})
        .then((q) => q.credits.cost);
      cost.catch(() => this.#cache.delete(priceClass));
      this.#cache.set(priceClass, cost);
    }
    return cost;
  }

  priceClass(modelId: string, request: GenerationRequest): string {
    return priceClassOf(this.models, modelId, request);
  }
}
