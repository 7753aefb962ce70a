import { describe, expect, it } from 'vitest';
import type { GenerationRequest, Model } from '../../src/contract/index.js';
import { EMULATOR_MODELS, priceOf } from '../../src/emulator/index.js';
import { QuoteCache } from '../../src/scheduler/quote-cache.js';

const models = new Map<string, Model>(EMULATOR_MODELS.map((m) => [m.id, m as unknown as Model]));

function fakePreview() {
  const calls: Array<{ modelId: string; body: GenerationRequest }> = [];
  return {
    calls,
    client: {
      previewCredits: async (modelId: string, body: GenerationRequest) => {
        calls.push({ modelId, body });
        const { cost } = priceOf(modelId, body);
        return { modelId, credits: { cost, description: 'test' } };
      },
    },
  };
}

describe('QuoteCache', () => {
  it('quotes requests that differ only in free text once', async () => {
    const { calls, client } = fakePreview();
    const cache = new QuoteCache(client, models);
    const costs = await Promise.all(
      ['a', 'b', 'c'].map((p) => cache.quote('flux-portrait', { input: { prompt: p } })),
    );
    expect(new Set(costs).size).toBe(1);
    expect(calls).toHaveLength(1);
    expect(cache.calls).toBe(1);
  });

  it('quotes again when a price-relevant setting differs', async () => {
    const { calls, client } = fakePreview();
    const cache = new QuoteCache(client, models);
    const one = await cache.quote('flux-portrait', { input: { prompt: 'x' }, copies: 1 });
    const two = await cache.quote('flux-portrait', { input: { prompt: 'x' }, copies: 2 });
    expect(calls).toHaveLength(2);
    expect(two).toBe(priceOf('flux-portrait', { input: { prompt: 'x' }, copies: 2 }).cost);
    expect(two).toBeGreaterThan(one);
  });

  it('does not cache a failed quote', async () => {
    let fail = true;
    const cache = new QuoteCache(
      {
        previewCredits: async (modelId: string) => {
          if (fail) throw new Error('boom');
          return { modelId, credits: { cost: 7, description: '' } };
        },
      },
      models,
    );
    await expect(cache.quote('flux-portrait', { input: { prompt: 'x' } })).rejects.toThrow('boom');
    fail = false;
    await expect(cache.quote('flux-portrait', { input: { prompt: 'x' } })).resolves.toBe(7);
  });
});
