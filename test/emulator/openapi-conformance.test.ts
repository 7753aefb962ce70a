import { describe, expect, it } from 'vitest';
import { pngFor } from '../../src/emulator/index.js';
import { until } from '../helpers/index.js';
import { validateResponse } from '../helpers/openapi.js';
import { api, emulator, upload } from './helpers.js';

/** Sends a request and returns the OpenAPI violations of its real response. */
async function check(...args: Parameters<typeof api>) {
  const [, , method, path] = args;
  const reply = await api(...args);
  const violations = validateResponse({
    method,
    path,
    status: reply.status,
    headers: Object.fromEntries(reply.headers.entries()),
    body: reply.body,
  });
  return { reply, violations: violations.map((v) => `${method} ${path} ${reply.status}: ${v}`) };
}

describe('responses conform to openapi/service.yaml', () => {
  it('every endpoint, success and error answers', async () => {
    const em = await emulator({
      timeScale: 1000,
      rateLimits: { generations: { count: 3, windowMs: 60_000 } },
    });
    const key = em.accounts[0]!.apiKey;
    const all: string[] = [];
    const run = async (...args: Parameters<typeof check>) => {
      const result = await check(...args);
      all.push(...result.violations);
      return result.reply;
    };
    const asset = await upload(em, key, 'image/png', pngFor('ref'));
    await run(em, key, 'GET', '/account');
    await run(em, undefined, 'GET', '/account');
    await run(em, key, 'GET', '/models');
    await run(em, key, 'GET', '/models/veo-lite-audio');
    await run(em, key, 'GET', '/models/nope');
    await run(em, key, 'POST', '/models/sdxl-lite/preview-credits', { input: { prompt: 'x' } });
    await run(em, key, 'POST', '/models/sdxl-lite/preview-credits', { input: {} });
    const image = await run(
      em,
      key,
      'POST',
      '/models/sdxl-lite/generations',
      { input: { prompt: 'x' } },
      { 'idempotency-key': 'a' },
    );
    await run(
      em,
      key,
      'POST',
      '/models/sdxl-lite/generations',
      { input: { prompt: 'y' } },
      { 'idempotency-key': 'a' },
    );
    const video = await run(em, key, 'POST', '/models/seedance-fast/generations', {
      input: { prompt: 'x' },
    });
    await run(em, key, 'POST', '/models/sdxl-lite/generations', { input: { prompt: 'x' } });
    await run(em, key, 'POST', '/models/sdxl-lite/generations', { input: { prompt: 'x' } }); // 429
    await until(async () =>
      (await api(em, key, 'GET', `/generations/image/${image.body.ids[0]}`)).body.terminal
        ? true
        : undefined,
    );
    await until(async () =>
      (await api(em, key, 'GET', `/generations/video/${video.body.ids[0]}`)).body.terminal
        ? true
        : undefined,
    );
    await run(em, key, 'GET', `/generations/image/${image.body.ids[0]}`);
    await run(em, key, 'GET', `/generations/video/${video.body.ids[0]}`);
    await run(em, key, 'GET', `/generations/video/${image.body.ids[0]}`);
    await run(em, key, 'GET', '/generations?kind=image&limit=5');
    await run(em, key, 'GET', '/generations?kind=video');
    await run(em, key, 'POST', '/assets/presign', { mimeType: 'image/png', sizeBytes: 10 });
    await run(em, key, 'POST', '/assets/presign', { mimeType: 'text/plain', sizeBytes: 10 });
    const training = {
      name: 'Ava',
      style: 'realistic',
      gender: 'female',
      assetUrls: [asset],
      consentAcknowledged: true,
    };
    const job = await run(em, key, 'POST', '/training/jobs', training, { 'idempotency-key': 't' });
    await run(em, key, 'GET', `/training/jobs/${job.body.trainingId}`);
    await run(em, key, 'GET', '/influencers');
    await em.admin.setCredits(em.accounts[0]!.id, 0);
    await run(
      em,
      key,
      'POST',
      '/training/jobs',
      { ...training, name: 'Bo' },
      { 'idempotency-key': 'u' },
    );
    expect(all).toEqual([]);
    // The checker is live: a damaged account body is reported.
    const damaged = validateResponse({
      method: 'GET',
      path: '/account',
      status: 200,
      body: { plan: 'pro' },
    });
    expect(damaged.length).toBeGreaterThan(0);
  });
});
