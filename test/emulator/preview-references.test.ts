/**
 * preview-credits checks a request's shape like a create but, by default,
 * does not resolve its references (media ownership, influencerId,
 * generationId); creates always do. `previewChecksReferences: true` makes
 * preview as strict as create.
 */
import { describe, expect, it } from 'vitest';
import { priceOf } from '../../src/emulator/index.js';
import { api, emulator } from './helpers.js';

const UNKNOWN_ID = '6f1c0c8e-8a43-4a44-9d36-0c8b7f3f3e11';
const EXTERNAL = 'https://elsewhere.test/face.png';

interface Case {
  readonly what: string;
  readonly model: string;
  readonly body: { input: Record<string, unknown>; [key: string]: unknown };
  /** What a create (and a strict preview) answers. */
  readonly status: 400 | 404;
  readonly message: RegExp;
}

/** Requests valid in shape whose references do not resolve for account 0. */
async function referenceCases(em: Awaited<ReturnType<typeof emulator>>): Promise<Case[]> {
  const [mine, theirs] = [em.accounts[0]!.apiKey, em.accounts[1]!.apiKey];
  const pending = await api(em, mine, 'POST', '/models/sdxl-lite/generations', {
    input: { prompt: 'source' },
  });
  const foreign = await api(em, theirs, 'POST', '/models/sdxl-lite/generations', {
    input: { prompt: 'source' },
  });
  expect([pending.status, foreign.status]).toEqual([202, 202]);
  const i2v = (generationId: string) => ({ input: { prompt: 'move', duration: 10 }, generationId });
  return [
    {
      what: 'unknown source',
      model: 'kling-i2v',
      body: i2v(UNKNOWN_ID),
      status: 404,
      message: /^generationId/,
    },
    {
      what: "another account's source",
      model: 'kling-i2v',
      body: i2v(foreign.body.ids[0]),
      status: 404,
      message: /^generationId/,
    },
    {
      what: 'source not succeeded yet',
      model: 'kling-i2v',
      body: i2v(pending.body.ids[0]),
      status: 400,
      message: /^generationId/,
    },
    {
      what: 'unknown influencer',
      model: 'flux-portrait',
      body: { input: { prompt: 'x' }, influencerId: UNKNOWN_ID, copies: 3 },
      status: 404,
      message: /^influencerId/,
    },
    {
      what: 'external imageUrl',
      model: 'kling-i2v',
      body: { input: { prompt: 'x', imageUrl: EXTERNAL, resolution: '1080p' } },
      status: 400,
      message: /^input\.imageUrl/,
    },
    {
      what: 'external image list',
      model: 'nano-edit',
      body: { input: { prompt: 'x', image: [EXTERNAL, EXTERNAL] }, copies: 2 },
      status: 400,
      message: /^input\.image\[0\]/,
    },
    {
      what: 'external audio',
      model: 'lipsync-pro',
      body: { input: { image: EXTERNAL, audio: 'https://elsewhere.test/a.mp3', maxDuration: 7 } },
      status: 400,
      message: /^input\.image/,
    },
  ];
}

describe('preview-credits and references', () => {
  it('quotes unresolved references by default while creates still refuse them', async () => {
    const em = await emulator({ latency: { 'sdxl-lite': [600_000, 600_000] } });
    const key = em.accounts[0]!.apiKey;
    const cases = await referenceCases(em);
    const charges = (await em.admin.ledger()).length; // the two source generations
    for (const c of cases) {
      const quote = await api(em, key, 'POST', `/models/${c.model}/preview-credits`, c.body);
      expect(quote.status, `${c.what}: ${JSON.stringify(quote.body)}`).toBe(200);
      expect(quote.body.credits.cost, c.what).toBe(priceOf(c.model, c.body).cost);
      const created = await api(em, key, 'POST', `/models/${c.model}/generations`, c.body);
      expect(created.status, c.what).toBe(c.status);
      expect(created.body.error.message, c.what).toMatch(c.message);
    }
    expect(await em.admin.ledger()).toHaveLength(charges);
  });

  it('still checks the shape of references in preview', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    const cases: Array<[string, unknown, RegExp]> = [
      ['sdxl-lite', { input: { prompt: 'x' }, influencerId: UNKNOWN_ID }, /^influencerId/],
      ['flux-portrait', { input: { prompt: 'x' }, generationId: UNKNOWN_ID }, /^generationId/],
      ['kling-i2v', { input: { prompt: 'x', imageUrl: 'face.png' } }, /^input\.imageUrl/],
      ['nano-edit', { input: { prompt: 'x', image: Array(5).fill(EXTERNAL) } }, /^input\.image/],
      ['motion-transfer', { input: { image: EXTERNAL } }, /^input\.referenceVideo/],
      ['lipsync-pro', { input: { audio: EXTERNAL } }, /^input\.image/],
    ];
    for (const [model, body, message] of cases) {
      const r = await api(em, key, 'POST', `/models/${model}/preview-credits`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.error.message).toMatch(message);
    }
  });

  it('resolves references in preview exactly like create with previewChecksReferences', async () => {
    const em = await emulator({
      latency: { 'sdxl-lite': [600_000, 600_000] },
      behaviour: { previewChecksReferences: true },
    });
    const key = em.accounts[0]!.apiKey;
    for (const c of await referenceCases(em)) {
      const quote = await api(em, key, 'POST', `/models/${c.model}/preview-credits`, c.body);
      expect(quote.status, c.what).toBe(c.status);
      expect(quote.body.error.message, c.what).toMatch(c.message);
    }
    await em.admin.setBehaviour({ previewChecksReferences: false });
    const [first] = await referenceCases(em);
    const relaxed = await api(
      em,
      key,
      'POST',
      `/models/${first!.model}/preview-credits`,
      first!.body,
    );
    expect(relaxed.status).toBe(200);
  });
});
