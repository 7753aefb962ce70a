import { describe, expect, it } from 'vitest';
import {
  AssetUploadSchema,
  InfluencerListSchema,
  TrainingJobSchema,
} from '../../src/contract/index.js';
import { pngFor, TRAINING_COST } from '../../src/emulator/index.js';
import { until } from '../helpers/index.js';
import { api, emulator, upload } from './helpers.js';

describe('presigned uploads', () => {
  it('presigns, accepts the exact PUT on the upload origin and serves the asset', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    const bytes = pngFor('asset');
    const presign = await api(em, key, 'POST', '/assets/presign', {
      mimeType: 'image/png',
      sizeBytes: bytes.length,
    });
    const asset = AssetUploadSchema.parse(presign.body);
    expect(asset).toMatchObject({
      expiresInSeconds: 120,
      method: 'PUT',
      headers: { 'Content-Type': 'image/png' },
    });
    expect(asset.uploadUrl.startsWith(em.uploadOrigin)).toBe(true);
    expect((await fetch(asset.assetUrl)).status).toBe(404);
    const training = {
      name: 'Ava',
      style: 'realistic',
      gender: 'female',
      assetUrls: [asset.assetUrl],
      consentAcknowledged: true,
    };
    const early = await api(em, key, 'POST', '/training/jobs', training, {
      'idempotency-key': 't0',
    });
    expect(early.status).toBe(400);
    expect(early.body.error.message).toMatch(/^assetUrls\.0: the upload has not completed/);

    const wrongType = await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'image/jpeg' },
      body: bytes,
    });
    expect(wrongType.status).toBe(400);
    expect(((await wrongType.json()) as { error: { message: string } }).error.message).toMatch(
      /^Content-Type/,
    );
    const wrongSize = await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: asset.headers,
      body: bytes.subarray(1),
    });
    expect(wrongSize.status).toBe(400);
    const put = await fetch(asset.uploadUrl, {
      method: 'PUT',
      headers: { ...asset.headers, authorization: `Bearer ${key}` },
      body: bytes,
    });
    expect(put.status).toBe(200);
    const served = Buffer.from(await (await fetch(asset.assetUrl)).arrayBuffer());
    expect(served.equals(bytes)).toBe(true);
    const stats = await em.admin.stats();
    expect(stats.uploadAuthorization).toHaveLength(1);
    expect(JSON.stringify(stats)).not.toContain(key);
  });

  it('rejects unsupported types, bad sizes, and expired URLs', async () => {
    const em = await emulator({ presignLifetimeSeconds: 0.2 });
    const key = em.accounts[0]!.apiKey;
    const bad = await api(em, key, 'POST', '/assets/presign', {
      mimeType: 'text/plain',
      sizeBytes: 3,
    });
    expect(bad.body.error.message).toMatch(/^mimeType/);
    const big = await api(em, key, 'POST', '/assets/presign', {
      mimeType: 'image/png',
      sizeBytes: 8_388_609,
    });
    expect(big.body.error.message).toMatch(/^sizeBytes/);
    const presign = await api(em, key, 'POST', '/assets/presign', {
      mimeType: 'audio/mpeg',
      sizeBytes: 3,
    });
    const expired = await until(
      async () => {
        const r = await fetch(presign.body.uploadUrl, {
          method: 'PUT',
          headers: presign.body.headers,
          body: 'abc',
        });
        return r.status === 403 ? r : undefined;
      },
      { timeoutMs: 3000, what: 'expiry' },
    );
    expect(((await expired.json()) as { error: { code: string } }).error.code).toBe(
      'upload_expired',
    );
  });
});

describe('training', () => {
  const FAST = {
    timeScale: 100,
    trainingMs: { queued: 5000, characterSheet: 20_000, lora: 20_000 },
  };

  it('queues, charges once, lists the influencer, succeeds and makes it usable', async () => {
    const em = await emulator(FAST);
    const key = em.accounts[0]!.apiKey;
    const url = await upload(em, key, 'image/png', pngFor('ref'));
    const request = {
      name: 'Ava Stone',
      style: 'realistic',
      gender: 'female',
      assetUrls: [url],
      consentAcknowledged: true,
    };
    expect((await api(em, key, 'POST', '/training/jobs', request)).body.error.message).toMatch(
      /^Idempotency-Key/,
    );
    const created = await api(em, key, 'POST', '/training/jobs', request, {
      'idempotency-key': 'ava',
    });
    expect(created.status).toBe(202);
    const job = TrainingJobSchema.parse(created.body);
    expect(job).toMatchObject({
      status: 'queued',
      ready: false,
      terminal: false,
      refunded: false,
      loraUrl: null,
      creditsCost: TRAINING_COST,
    });
    const list = InfluencerListSchema.parse((await api(em, key, 'GET', '/influencers')).body);
    expect(list).toMatchObject({ total: 1, ready: 0 });
    expect(list.characters[0]).toMatchObject({
      id: job.influencerId,
      status: 'training',
      ready: false,
      username: 'ava_stone',
    });
    const stages = new Set<string>();
    const done = await until(async () => {
      const r = await api(em, key, 'GET', `/training/jobs/${job.trainingId}`);
      stages.add(r.body.stage);
      return r.body.terminal ? r.body : undefined;
    });
    expect(done).toMatchObject({ status: 'succeeded', ready: true, refunded: false });
    expect(done.loraUrl).toMatch(/\.safetensors$/);
    expect(stages.has('character-sheet')).toBe(true);
    expect((await api(em, key, 'GET', '/influencers')).body.characters[0]).toMatchObject({
      status: 'ready',
      ready: true,
    });
    const gen = await api(em, key, 'POST', '/models/flux-portrait/generations', {
      input: { prompt: 'x' },
      influencerId: job.influencerId,
    });
    expect(gen.status).toBe(202);
    expect(
      (await api(em, em.accounts[1]!.apiKey, 'GET', `/training/jobs/${job.trainingId}`)).status,
    ).toBe(404);
    expect((await em.admin.ledger()).filter((e) => e.trainingId)).toHaveLength(1);
  });

  it('rejects foreign, external and non-image assets before billing; refunds failed jobs', async () => {
    const em = await emulator(FAST);
    const [a, b] = [em.accounts[0]!.apiKey, em.accounts[1]!.apiKey];
    const foreign = await upload(em, b, 'image/jpeg', Buffer.from('jpeg'));
    const audio = await upload(em, a, 'audio/mpeg', Buffer.from('mp3'));
    const mine = await upload(em, a, 'image/webp', Buffer.from('webp'));
    const request = {
      name: 'Bo',
      style: 'anime',
      gender: 'male',
      consentAcknowledged: true,
      assetUrls: [mine, foreign, 'https://example.com/x.png', audio],
    };
    const rejected = await api(em, a, 'POST', '/training/jobs', request, {
      'idempotency-key': 'bo',
    });
    expect(rejected.status).toBe(400);
    expect(rejected.body.error.details.map((d: { index: number }) => d.index)).toEqual([1, 2, 3]);
    const noConsent = await api(
      em,
      a,
      'POST',
      '/training/jobs',
      { ...request, assetUrls: [mine], consentAcknowledged: false },
      { 'idempotency-key': 'bo' },
    );
    expect(noConsent.body.error.message).toMatch(/^consentAcknowledged/);
    expect(await em.admin.ledger()).toEqual([]);

    await em.admin.scriptFaults([{ endpoint: 'createTraining', fault: 'training-fail' }]);
    const twenty = Array.from({ length: 20 }, () => mine);
    const job = await api(
      em,
      a,
      'POST',
      '/training/jobs',
      { ...request, assetUrls: twenty },
      { 'idempotency-key': 'bo' },
    );
    expect(job.status).toBe(202);
    const failed = await until(async () => {
      const r = await api(em, a, 'GET', `/training/jobs/${job.body.trainingId}`);
      return r.body.terminal ? r.body : undefined;
    });
    expect(failed).toMatchObject({
      status: 'failed',
      refunded: true,
      ready: false,
      characterSheetSkipped: true,
    });
    expect((await api(em, a, 'GET', '/account')).body.credits).toBe(25_000);
    expect((await api(em, a, 'GET', '/influencers')).body.characters[0].status).toBe('failed');
    await em.admin.setCredits(em.accounts[0]!.id, 10);
    const short = await api(
      em,
      a,
      'POST',
      '/training/jobs',
      { ...request, assetUrls: [mine] },
      { 'idempotency-key': 'short' },
    );
    expect(short.status).toBe(402);
  });
});
