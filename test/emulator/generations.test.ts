import { crc32, inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  CreditQuoteSchema,
  GenerationHistorySchema,
  GenerationStatusSchema,
  generationOutcome,
  ModelEnvelopeSchema,
  QueuedGenerationSchema,
} from '../../src/contract/index.js';
import { EMULATOR_MODELS, priceOf } from '../../src/emulator/index.js';
import { PNG_SIGNATURE } from '../../src/media/index.js';
import { until } from '../helpers/index.js';
import { api, emulator } from './helpers.js';

// Outputs settle in 0.2-0.4 s: slow enough to observe `queued`, fast enough for tests.
const FAST = {
  timeScale: 100,
  latency: {
    'flux-portrait': [20_000, 40_000],
    'sdxl-lite': [20_000, 40_000],
    'veo-lite-audio': [20_000, 40_000],
  },
} as const;

async function waitTerminal(
  em: Awaited<ReturnType<typeof emulator>>,
  key: string,
  kind: string,
  id: string,
) {
  return until(
    async () => {
      const r = await api(em, key, 'GET', `/generations/${kind}/${id}`);
      return r.body.terminal ? r : undefined;
    },
    { timeoutMs: 5000, what: `generation ${id}` },
  );
}

describe('models', () => {
  it('lists >= 8 models with the verbatim example video contract', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    const one = await api(em, key, 'GET', '/models/veo-lite-audio');
    const model = ModelEnvelopeSchema.parse(one.body).model;
    const byName = Object.fromEntries(model.fields.map((f) => [f.name, f]));
    expect(Object.keys(byName)).toEqual([
      'prompt',
      'resolution',
      'aspectRatio',
      'duration',
      'enable_prompt_expansion',
      'generateAudio',
      'seed',
      'startFrameUrl',
      'endFrameUrl',
    ]);
    expect(byName.duration).toMatchObject({ type: 'number', default: 5, min: 2, max: 30 });
    expect(byName.seed).toMatchObject({ default: -1, min: -1, max: 2147483647 });
    // Every bound the emulator enforces is served, beyond the reference's own.
    expect(byName.seed).toMatchObject({ integer: true, exclude: [0] });
    expect(byName.prompt).toMatchObject({ type: 'text', maxLength: 4000 });
    expect(byName.resolution?.options).toEqual([
      { value: '480p', label: '480p' },
      { value: '720p', label: '720p' },
      { value: '1080p', label: '1080p' },
    ]);
    expect((await api(em, key, 'GET', '/models/nope')).status).toBe(404);
    await em.admin.setBehaviour({ optionShape: 'bare' });
    const bare = await api(em, key, 'GET', '/models/veo-lite-audio');
    expect(bare.body.model.fields[1].options).toEqual(['480p', '720p', '1080p']);
  });
});

describe('preview and create', () => {
  it('previews without charging, creates image copies, succeeds with valid distinct PNGs', async () => {
    const em = await emulator(FAST);
    const key = em.accounts[0]!.apiKey;
    const request = { input: { prompt: 'a cat', aspectRatio: '9:16' }, copies: 2 };
    const quote = await api(em, key, 'POST', '/models/flux-portrait/preview-credits', request);
    expect(quote.status).toBe(200);
    expect(CreditQuoteSchema.parse(quote.body).credits.cost).toBe(
      priceOf('flux-portrait', request).cost,
    );
    expect((await api(em, key, 'GET', '/account')).body.credits).toBe(25_000);

    const created = await api(em, key, 'POST', '/models/flux-portrait/generations', request);
    expect(created.status).toBe(202);
    const queued = QueuedGenerationSchema.parse(created.body);
    expect(queued).toMatchObject({
      status: 'queued',
      kind: 'image',
      modelId: 'flux-portrait',
      creditsCost: 8,
    });
    expect(queued.ids).toHaveLength(2);
    expect((await api(em, key, 'GET', '/account')).body.credits).toBe(25_000 - 8);

    const first = await api(em, key, 'GET', `/generations/image/${queued.ids[0]}`);
    expect(GenerationStatusSchema.parse(first.body).terminal).toBe(false);
    const pngs: Buffer[] = [];
    for (const id of queued.ids) {
      const done = GenerationStatusSchema.parse((await waitTerminal(em, key, 'image', id)).body);
      expect(done).toMatchObject({ status: 'success', ready: true, refunded: false });
      expect(generationOutcome(done)).toBe('succeeded');
      const file = await fetch(done.urls![0]!);
      expect(file.headers.get('content-type')).toBe('image/png');
      const png = Buffer.from(await file.arrayBuffer());
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      expect(png.subarray(12, 16).toString('latin1')).toBe('IHDR');
      expect(png.readUInt32BE(16)).toBe(64);
      expect(png.readUInt32BE(29)).toBe(crc32(png.subarray(12, 29)));
      pngs.push(png);
    }
    expect(pngs[0]!.equals(pngs[1]!)).toBe(false);
    const idat = pngs[0]!.indexOf('IDAT');
    const len = pngs[0]!.readUInt32BE(idat - 4);
    expect(inflateSync(pngs[0]!.subarray(idat + 4, idat + 4 + len))).toHaveLength(
      65 * 3 * 64 + 64 - 64 * 3,
    );

    const history = await api(em, key, 'GET', '/generations?kind=image&limit=1');
    const parsed = GenerationHistorySchema.parse(history.body);
    expect(parsed.generations).toHaveLength(1);
    expect(parsed.generations[0]).toMatchObject({
      id: queued.ids[1],
      status: 'Success',
      prompt: 'a cat',
    });
    // Exactly the reference's fields: nothing a client could lean on that the
    // service does not promise (no terminal, refunded, urls, creditsCost, modelId).
    expect(Object.keys(parsed.generations[0] ?? {}).sort()).toEqual([
      'createdAt',
      'id',
      'prompt',
      'status',
      'url',
    ]);
  });

  it('runs a video and image-to-video from an owned image generation', async () => {
    const em = await emulator(FAST);
    const key = em.accounts[0]!.apiKey;
    const video = await api(em, key, 'POST', '/models/veo-lite-audio/generations', {
      input: { prompt: 'waves', duration: 10, resolution: '1080p' },
    });
    expect(video.status).toBe(202);
    expect(video.body.creditsCost).toBe(8 * 10 * 1.5);
    const done = await waitTerminal(em, key, 'video', video.body.ids[0]);
    expect(done.body.url).toMatch(/\.mp4$/);
    const clip = Buffer.from(await (await fetch(done.body.url)).arrayBuffer());
    expect(clip.subarray(4, 8).toString('latin1')).toBe('ftyp');

    const image = await api(em, key, 'POST', '/models/sdxl-lite/generations', {
      input: { prompt: 'x' },
    });
    const notYet = await api(em, key, 'POST', '/models/kling-i2v/generations', {
      input: { prompt: 'move' },
      generationId: image.body.ids[0],
    });
    expect(notYet.status).toBe(400);
    expect(notYet.body.error.message).toMatch(/^generationId/);
    await waitTerminal(em, key, 'image', image.body.ids[0]);
    const i2v = await api(em, key, 'POST', '/models/kling-i2v/generations', {
      input: { prompt: 'move', duration: 10 },
      generationId: image.body.ids[0],
    });
    expect(i2v.status).toBe(202);
    const other = em.accounts[1]!.apiKey;
    const foreign = await api(em, other, 'POST', '/models/kling-i2v/generations', {
      input: { prompt: 'move' },
      generationId: image.body.ids[0],
    });
    expect(foreign.status).toBe(404);
    expect((await api(em, other, 'GET', `/generations/image/${image.body.ids[0]}`)).status).toBe(
      404,
    );
    expect((await api(em, key, 'GET', `/generations/video/${image.body.ids[0]}`)).status).toBe(404);
  });

  it('answers 400 naming the field, 402 when short, and never charges on errors', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    const cases: Array<[string, unknown, RegExp]> = [
      ['veo-lite-audio', { input: { prompt: 'x', duration: 31 } }, /^input\.duration/],
      ['veo-lite-audio', { input: { prompt: 'x', seed: 0 } }, /^input\.seed/],
      ['veo-lite-audio', { input: { prompt: 'x', resolution: '4k' } }, /^input\.resolution/],
      ['veo-lite-audio', { input: { prompt: 'x' }, copies: 2 }, /^copies/],
      [
        'veo-lite-audio',
        { input: { prompt: 'x', startFrameUrl: 'evil.test/a.png' } },
        /^input\.startFrameUrl/,
      ],
      ['kling-i2v', { input: { prompt: 'x' } }, /^input\.imageUrl/],
      ['flux-portrait', { input: { prompt: 'x' }, generationId: 'not-a-uuid' }, /generationId/],
      ['flux-portrait', { input: {} }, /^input\.prompt/],
      ['flux-portrait', { input: { prompt: 'x', colour: 'red' } }, /^input\.colour/],
      ['flux-portrait', { input: { prompt: 'x' }, copies: 5 }, /^copies/],
      ['flux-portrait', { input: { prompt: 'x' }, extra: 1 }, /extra/],
      [
        'sdxl-lite',
        { input: { prompt: 'x' }, influencerId: '6f1c0c8e-8a43-4a44-9d36-0c8b7f3f3e11' },
        /^influencerId/,
      ],
      ['nano-edit', { input: { prompt: 'x' } }, /^input\.image/],
    ];
    for (const [model, body, message] of cases) {
      for (const op of ['preview-credits', 'generations']) {
        const r = await api(em, key, 'POST', `/models/${model}/${op}`, body);
        expect(r.status, JSON.stringify(body)).toBe(400);
        expect(r.body.error.code).toBe('validation_error');
        expect(r.body.error.message).toMatch(message);
      }
    }
    const bad = await api(em, key, 'POST', '/models/flux-portrait/generations', '{"input":');
    expect(bad.body.error.message).toMatch(/^body/);
    expect((await api(em, key, 'POST', '/models/nope/generations', { input: {} })).status).toBe(
      404,
    );
    await em.admin.setCredits(em.accounts[0]!.id, 3);
    const short = await api(em, key, 'POST', '/models/flux-portrait/generations', {
      input: { prompt: 'x' },
    });
    expect(short.status).toBe(402);
    expect(short.body.error.code).toBe('insufficient_credits');
    expect(await em.admin.ledger()).toEqual([]);
  });

  it('answers 401 for missing, invalid and revoked keys', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    for (const k of [undefined, 'ifk_live_nope', 'garbage']) {
      const r = await api(em, k, 'GET', '/account');
      expect(r.status).toBe(401);
      expect(r.body.error.code).toBe('unauthorized');
    }
    await em.admin.revokeKey(key);
    expect((await api(em, key, 'GET', '/models')).status).toBe(401);
    expect((await api(em, em.accounts[1]!.apiKey, 'GET', '/account')).status).toBe(200);
  });

  it('validates history kind and limit (reject by default, clamp when switched)', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    expect((await api(em, key, 'GET', '/generations')).status).toBe(400);
    const over = await api(em, key, 'GET', '/generations?kind=video&limit=51');
    expect(over.status).toBe(400);
    expect(over.body.error.message).toMatch(/^limit/);
    await em.admin.setBehaviour({ historyLimitOutOfRange: 'clamp' });
    expect((await api(em, key, 'GET', '/generations?kind=video&limit=51')).status).toBe(200);
  });

  it('has a price for every model', () => {
    for (const model of EMULATOR_MODELS) {
      expect(priceOf(model.id, { input: {} }).cost).toBeGreaterThan(0);
    }
  });
});
