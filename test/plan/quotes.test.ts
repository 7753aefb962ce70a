import { describe, expect, it } from 'vitest';
import type { GenerationRequest, Model } from '../../src/contract/index.js';
import { EMULATOR_MODELS, priceOf } from '../../src/emulator/index.js';
import { priceClassOf, QuoteCache } from '../../src/plan/index.js';

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

describe('priceClassOf', () => {
  it('puts a plan stand-in request and the run resolved request in one class', () => {
    // nano-edit: a prompt (text) and reference images (media); the plan quotes
    // placeholder URLs and no influencer, the run sends owned asset URLs.
    const planned: GenerationRequest = {
      input: { prompt: 'retouch', image: ['https://ibatch.invalid/pending-upload/a.png'] },
    };
    const resolved: GenerationRequest = {
      input: { prompt: 'a different text', image: ['https://cdn.example/assets/42.png'] },
      influencerId: '3f1c2a9e-7b7d-4c55-9a55-0c4f7d2d9e11',
    };
    expect(priceClassOf(models, 'nano-edit', planned)).toBe(
      priceClassOf(models, 'nano-edit', resolved),
    );
  });

  it('separates requests whose price-relevant settings or media counts differ', () => {
    const base = { prompt: 'x', image: ['https://a.example/1.png'] };
    const one = priceClassOf(models, 'nano-edit', { input: base });
    const two = priceClassOf(models, 'nano-edit', {
      input: { ...base, image: ['https://a.example/1.png', 'https://a.example/2.png'] },
    });
    expect(two).not.toBe(one);
    const standard = priceClassOf(models, 'ideogram-influencer', {
      input: { prompt: 'x', quality: 'standard' },
    });
    const hd = priceClassOf(models, 'ideogram-influencer', {
      input: { prompt: 'x', quality: 'hd' },
    });
    expect(hd).not.toBe(standard);
    expect(priceClassOf(models, 'flux-portrait', { input: { prompt: 'x' }, copies: 2 })).not.toBe(
      priceClassOf(models, 'flux-portrait', { input: { prompt: 'x' } }),
    );
  });
});

describe('priceClassOf and the source generation', () => {
  it('counts a source generation without identifying it', () => {
    const withSource = (generationId: string) =>
      priceClassOf(models, 'kling-i2v', { input: { prompt: 'move' }, generationId });
    expect(withSource('00000000-0000-4000-8000-000000000000')).toBe(
      withSource('6b0e5d38-1c1f-4b8e-9d55-2f0a3c4e5d61'),
    );
    expect(priceClassOf(models, 'kling-i2v', { input: { prompt: 'move' } })).not.toBe(
      withSource('6b0e5d38-1c1f-4b8e-9d55-2f0a3c4e5d61'),
    );
  });
});
