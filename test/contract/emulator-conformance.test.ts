/**
 * Drives each of the 12 endpoints of a real emulator through the contract
 * proxy, on success and error paths, and checks every answer against
 * openapi/service.yaml. Requests that are wrong on purpose (to provoke a 400
 * or 401) must be flagged as request violations, and nothing else may be.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pngFor, type RunningEmulator } from '../../src/emulator/index.js';
import { type ContractProxy, startContractProxy } from '../helpers/contract-proxy.js';
import { testEmulator, until } from '../helpers/index.js';

const UNKNOWN_UUID = '6a1f0c2e-3b4d-4e5f-8a9b-0c1d2e3f4a5b';

let emulator: RunningEmulator;
let proxy: ContractProxy;
let apiKey: string;
let accountId: string;
/** `METHOD path` of each request sent wrong on purpose. */
const deliberatelyInvalid: string[] = [];

interface Call {
  status: number;
  headers: Headers;
  body: unknown;
}

async function call(
  method: 'GET' | 'POST',
  path: string,
  options: { body?: unknown; headers?: Record<string, string>; auth?: string | null } = {},
): Promise<Call> {
  const headers: Record<string, string> = { ...options.headers };
  const auth = options.auth === undefined ? `Bearer ${apiKey}` : options.auth;
  if (auth !== null) headers.authorization = auth;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${proxy.baseUrl}${path}`, {
    method,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

/** A request the document forbids: the proxy must flag it. */
function invalid(method: 'GET' | 'POST', path: string, options: Parameters<typeof call>[2] = {}) {
  deliberatelyInvalid.push(`${method} ${path}`);
  return call(method, path, options);
}

/** Reads until `done` holds for what was read (the kit's until, with a predicate on the value). */
async function readUntil<T extends object>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  what: string,
): Promise<T> {
  return until(
    async () => {
      const value = await read();
      return done(value) ? value : undefined;
    },
    { timeoutMs: 10_000, what, everyMs: 25 },
  );
}

const errorCode = (result: Call) => (result.body as { error: { code: string } }).error.code;

beforeAll(async () => {
  emulator = await testEmulator({
    seed: 7,
    timeScale: 200,
    // A small upload budget so a real 429 is reachable within the test.
    rateLimits: { uploads: { count: 3, windowMs: 3_600_000 } },
    trainingMs: { queued: 100, characterSheet: 200, lora: 200 },
  });
  proxy = await startContractProxy(emulator.baseUrl);
  const [account] = emulator.accounts;
  if (!account) throw new Error('Expected a seeded emulator account');
  ({ apiKey, id: accountId } = account);
});

afterAll(async () => {
  await proxy?.stop();
});

describe('the emulator conforms to openapi/service.yaml', () => {
  let imageModel = '';
  let videoModel = '';
  let assetUrl = '';

  it('GET /account, /influencers, /models, /models/{modelId}', async () => {
    expect((await call('GET', '/account')).status).toBe(200);
    expect((await call('GET', '/influencers')).status).toBe(200);
    const models = await call('GET', '/models');
    expect(models.status).toBe(200);
    const list = (models.body as { models: Array<{ id: string; kind: string }> }).models;
    imageModel = list.find((m) => m.kind === 'image')?.id ?? '';
    videoModel = list.find((m) => m.kind === 'video')?.id ?? '';
    expect(imageModel && videoModel).toBeTruthy();
    expect((await call('GET', `/models/${imageModel}`)).status).toBe(200);
    expect((await call('GET', '/models/no-such-model')).status).toBe(404);
  });

  it('POST /models/{modelId}/preview-credits', async () => {
    const ok = await call('POST', `/models/${imageModel}/preview-credits`, {
      body: { input: { prompt: 'a cat' } },
    });
    expect(ok.status).toBe(200);
    // Conforms to the document (input is open) but fails the model contract.
    const badInput = await call('POST', `/models/${imageModel}/preview-credits`, {
      body: { input: {} },
    });
    expect(badInput.status).toBe(400);
    const extra = await invalid('POST', `/models/${imageModel}/preview-credits`, {
      body: { input: { prompt: 'a cat' }, price: 0 },
    });
    expect(errorCode(extra)).toBe('validation_error');
    expect(
      (await call('POST', '/models/no-such-model/preview-credits', { body: { input: {} } })).status,
    ).toBe(404);
  });

  it('POST /models/{modelId}/generations, replays and conflicts, then polls', async () => {
    const path = `/models/${imageModel}/generations`;
    const request = {
      body: { input: { prompt: 'a cat' } },
      headers: { 'idempotency-key': 'conf-1' },
    };
    const created = await call('POST', path, request);
    expect(created.status).toBe(202);
    expect((await call('POST', path, request)).status).toBe(202);
    await emulator.admin.setBehaviour({ replayStatus: 200 });
    expect((await call('POST', path, request)).status).toBe(200);
    const conflict = await call('POST', path, { ...request, body: { input: { prompt: 'a dog' } } });
    expect(conflict.status).toBe(409);

    const [id] = (created.body as { ids: string[] }).ids;
    const finished = await readUntil(
      () => call('GET', `/generations/image/${id}`),
      (result) => (result.body as { terminal?: boolean }).terminal === true,
      'the image generation',
    );
    expect(finished.status).toBe(200);
    expect((await call('GET', '/generations/image/no-such-id')).status).toBe(404);

    const video = await call('POST', `/models/${videoModel}/generations`, {
      body: { input: { prompt: 'a wave' } },
    });
    expect(video.status).toBe(202);
    const [videoId] = (video.body as { ids: string[] }).ids;
    expect((await call('GET', `/generations/video/${videoId}`)).status).toBe(200);
    expect((await call('GET', '/generations/video/no-such-id')).status).toBe(404);
  });

  it('GET /generations', async () => {
    expect((await call('GET', '/generations?kind=image')).status).toBe(200);
    expect((await call('GET', '/generations?kind=video&limit=50')).status).toBe(200);
    expect((await invalid('GET', '/generations?kind=image&limit=51')).status).toBe(400);
    expect((await invalid('GET', '/generations')).status).toBe(400);
  });

  it('POST /assets/presign, then the presigned PUT', async () => {
    const presigned = await call('POST', '/assets/presign', {
      body: { mimeType: 'image/png', sizeBytes: pngFor('conformance').length },
    });
    expect(presigned.status).toBe(200);
    const upload = presigned.body as {
      uploadUrl: string;
      assetUrl: string;
      headers: Record<string, string>;
    };
    const put = await fetch(upload.uploadUrl, {
      method: 'PUT',
      headers: upload.headers,
      body: pngFor('conformance'),
    });
    expect(put.ok).toBe(true);
    assetUrl = upload.assetUrl;
    const tooBig = await invalid('POST', '/assets/presign', {
      body: { mimeType: 'image/png', sizeBytes: 8_388_609 },
    });
    expect(tooBig.status).toBe(400);
  });

  it('POST /training/jobs and GET /training/jobs/{trainingId}', async () => {
    const body = {
      name: 'Conformance',
      style: 'realistic',
      gender: 'female',
      assetUrls: [assetUrl],
      consentAcknowledged: true,
    };
    const created = await call('POST', '/training/jobs', {
      body,
      headers: { 'idempotency-key': 'train-1' },
    });
    expect(created.status).toBe(202);
    const { trainingId } = created.body as { trainingId: string };
    const done = await readUntil(
      () => call('GET', `/training/jobs/${trainingId}`),
      (result) => (result.body as { terminal?: boolean }).terminal === true,
      'the training job',
    );
    expect(done.status).toBe(200);
    expect((await call('GET', `/training/jobs/${UNKNOWN_UUID}`)).status).toBe(404);
    expect((await invalid('POST', '/training/jobs', { body })).status).toBe(400);
    const external = await call('POST', '/training/jobs', {
      body: { ...body, assetUrls: ['https://elsewhere.example/a.png'] },
      headers: { 'idempotency-key': 'train-2' },
    });
    expect([400, 404]).toContain(external.status);
  });

  it('answers 402 when credits run out', async () => {
    await emulator.admin.setCredits(accountId, 0);
    const poor = await call('POST', `/models/${imageModel}/generations`, {
      body: { input: { prompt: 'a cat' } },
    });
    expect(poor.status).toBe(402);
    const training = await call('POST', '/training/jobs', {
      body: {
        name: 'Poor',
        style: 'anime',
        gender: 'male',
        assetUrls: [assetUrl],
        consentAcknowledged: true,
      },
      headers: { 'idempotency-key': 'train-poor' },
    });
    expect(training.status).toBe(402);
  });

  it('answers 401 without or with a wrong key', async () => {
    expect((await invalid('GET', '/influencers', { auth: null })).status).toBe(401);
    expect((await call('GET', '/account', { auth: 'Bearer ifk_live_wrong' })).status).toBe(401);
  });

  it('answers 429 with Retry-After once a bucket is empty', async () => {
    const presign = () =>
      call('POST', '/assets/presign', { body: { mimeType: 'image/png', sizeBytes: 10 } });
    const limited = await readUntil(presign, (result) => result.status === 429, 'a 429');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('answers 5xx with the error body', async () => {
    await emulator.admin.scriptFaults([
      { fault: 'error-500', endpoint: 'getAccount' },
      { fault: 'error-503', endpoint: 'listModels' },
    ]);
    expect((await call('GET', '/account')).status).toBe(500);
    expect((await call('GET', '/models')).status).toBe(503);
  });

  it('recorded no response violation, and flagged exactly the deliberate bad requests', () => {
    expect(proxy.violations.filter((v) => v.kind === 'response')).toEqual([]);
    const flagged = proxy.violations.map((v) => `${v.method} ${v.path}`);
    expect(flagged.sort()).toEqual([...deliberatelyInvalid].sort());
    expect(flagged).toHaveLength(6);
    expect(proxy.requests).toBeGreaterThan(30);
  });
});
