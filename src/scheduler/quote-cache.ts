/**
 * Prices for budget reservations, with as few preview calls as possible.
 *
 * A preview is free but costs a request from the account's budget of 120 a
 * minute, as much as a create. Prices depend on a model's settings (copies,
 * duration, resolution...), not on free text, the chosen source image or the
 * influencer: requests that differ only there share one quote. The first item
 * of each price class is quoted with its real, resolved request (so the
 * service validates exactly what will be sent).
 */
import type { CreditQuote, GenerationRequest, Model } from '../contract/index.js';
import { canonicalJson } from '../shared/index.js';

export interface PreviewClient {
  previewCredits(
    modelId: string,
    body: GenerationRequest,
    options?: { readonly signal?: AbortSignal },
  ): Promise<CreditQuote>;
}

const PRICE_NEUTRAL_TYPES = new Set(['text']);
const MEDIA_TYPES = new Set(['image', 'video', 'audio', 'file', 'media']);

export class QuoteCache {
  readonly #cache = new Map<string, Promise<number>>();
  #calls = 0;

  constructor(
    private readonly client: PreviewClient,
    private readonly models: ReadonlyMap<string, Model>,
  ) {}

  /** Preview calls made so far. */
  get calls(): number {
    return this.#calls;
  }

  quote(modelId: string, request: GenerationRequest, signal?: AbortSignal): Promise<number> {
    const key = this.priceKey(modelId, request);
    let cost = this.#cache.get(key);
    if (!cost) {
      this.#calls += 1;
      cost = this.client.previewCredits(modelId, request, { signal }).then((q) => q.credits.cost);
      // A failed quote is not cached: the next item asks again.
      cost.catch(() => this.#cache.delete(key));
      this.#cache.set(key, cost);
    }
    return cost;
  }

  /** The request with what does not change a price taken out. */
  priceKey(modelId: string, request: GenerationRequest): string {
    const fields = new Map((this.models.get(modelId)?.fields ?? []).map((f) => [f.name, f.type]));
    const input: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(request.input)) {
      const type = fields.get(name);
      if (type && PRICE_NEUTRAL_TYPES.has(type)) continue;
      if (type && MEDIA_TYPES.has(type)) {
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
      f: request.influencerId !== undefined,
    });
  }
}
