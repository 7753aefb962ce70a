/**
 * Every endpoint through the client against the real emulator over HTTP,
 * success and error paths, with the emulator's faults and admin counters.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  ApiError,
  ContractError,
  createClient,
  NetworkError,
  type ServiceClient,
} from '../../src/api/index.js';
import { pngFor } from '../../src/emulator/index.js';
import { type EmulatorClient, startEmulatorClient } from './helpers/emulator-client.js';

let env: EmulatorClient;
let client: ServiceClient;

beforeAll(async () => {
  env = await startEmulatorClient({ behaviour: { replayStatus: 200 } });
  client = env.client;
});

async function uploadPng(id: string): Promise<string> {
  const bytes = pngFor(id);
  const presign = await client.presignAsset({ mimeType: 'image/png', sizeBytes: bytes.length });
  const result = await client.upload(presign, bytes);
  return result.assetUrl;
}

describe('success paths', () => {
  it('reads the account, influencers and models', async () => {
    const account = await client.getAccount();
    expect(account.credits).toBeGreaterThan(0);
    expect(client.rateLimit.limit).toBeGreaterThan(0);
    const influencers = await client.listInfluencers();
    expect(influencers.total).toBe(influencers.characters.length);
    const { models } = await client.listModels();
    expect(models.length).toBeGreaterThan(3);
    const model = await client.getModel('flux-portrait');
    expect(model).toMatchObject({ id: 'flux-portrait', kind: 'image' });
  });

  it('previews, creates and polls a generation; lists history', async () => {
    const body = { input: { prompt: 'a portrait' }, copies: 2 };
    const quote = await client.previewCredits('flux-portrait', body);
    expect(quote.credits.cost).toBeGreaterThan(0);
    const queued = await client.createGeneration('flux-portrait', body);
    expect(queued).toMatchObject({
      kind: 'image',
      creditsCost: quote.credits.cost,
      replayed: false,
      httpStatus: 202,
    });
    expect(queued.idempotencyKey).toMatch(/^ibatch-/);
    expect(Object.keys(queued)).not.toContain('replayed');
    const status = await client.getGeneration('image', queued.ids[0]!);
    expect(status.id).toBe(queued.ids[0]);
    const history = await client.listGenerations('image', { limit: 5 });
    expect(history.generations.map((g) => g.id)).toContain(queued.ids[0]);
  });

  it('uploads without Authorization, trains, and reads the training', async () => {
    const assetUrl = await uploadPng('ref-1');
    const job = await client.createTraining(
      {
        name: 'Ava',
        style: 'realistic',
        gender: 'female',
        assetUrls: [assetUrl],
        consentAcknowledged: true,
      },
      { idempotencyKey: 'train-ava-1' },
    );
    expect(job).toMatchObject({ status: 'queued', terminal: false, replayed: false });
    const again = await client.getTraining(job.trainingId);
    expect(again.trainingId).toBe(job.trainingId);
    const stats = await env.emulator.admin.stats();
    expect(stats.uploadAuthorization).toEqual([]);
  });

  it('flags a replay of a create with the same key and payload', async () => {
    const body = { input: { prompt: 'replay me' } };
    const first = await client.createGeneration('sdxl-lite', body, { idempotencyKey: 'replay-1' });
    const second = await client.createGeneration('sdxl-lite', body, { idempotencyKey: 'replay-1' });
    expect(second.ids).toEqual(first.ids);
    expect(second.replayed).toBe(true);
  });
});

describe('error paths', () => {
  it('a refused key is exit 5 and the key is never echoed', async () => {
    const bad = createClient({
      baseUrl: env.emulator.baseUrl,
      apiKey: 'ifk_live_not_a_real_key_000',
    });
    try {
      const error = await bad.getAccount().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status: 401, code: 'unauthorized', exitCode: 5 });
      expect((error as Error).message).not.toContain('ifk_live_not_a_real_key_000');
    } finally {
      await bad.close();
    }
  });

  it('an unknown model and an unknown generation are 404 (exit 2)', async () => {
    await expect(client.getModel('no-such-model')).rejects.toMatchObject({
      status: 404,
      exitCode: 2,
    });
    await expect(
      client.getGeneration('video', '00000000-0000-4000-8000-000000000000'),
    ).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(client.getTraining('00000000-0000-4000-8000-000000000000')).rejects.toMatchObject({
      status: 404,
    });
  });

  it('invalid input is 400 validation_error, never retried', async () => {
    const before = env.events.length;
    await expect(client.previewCredits('flux-portrait', { input: {} })).rejects.toMatchObject({
      status: 400,
      code: 'validation_error',
      exitCode: 2,
    });
    await expect(
      client.presignAsset({ mimeType: 'text/plain', sizeBytes: 10 }),
    ).rejects.toMatchObject({
      status: 400,
    });
    await expect(client.listGenerations('image', { limit: 99 })).rejects.toMatchObject({
      status: 400,
    });
    expect(env.events.length).toBe(before);
  });

  it('a reused key with another payload is a 409 (exit 2), sent once', async () => {
    await client.createGeneration(
      'sdxl-lite',
      { input: { prompt: 'one' } },
      { idempotencyKey: 'conflict-1' },
    );
    const before = (await env.emulator.admin.stats()).accounts[0]!.counters.conflicts;
    await expect(
      client.createGeneration(
        'sdxl-lite',
        { input: { prompt: 'two' } },
        { idempotencyKey: 'conflict-1' },
      ),
    ).rejects.toMatchObject({ status: 409, code: 'idempotency_conflict', exitCode: 2 });
    const after = (await env.emulator.admin.stats()).accounts[0]!.counters.conflicts;
    expect(after - before).toBe(1);
  });

  it('too few credits is a 402 (exit 3)', async () => {
    const second = env.emulator.accounts[1]!;
    await env.emulator.admin.setCredits(second.id, 0);
    const poor = createClient({ baseUrl: env.emulator.baseUrl, apiKey: second.apiKey });
    try {
      await expect(
        poor.createGeneration('flux-portrait', { input: { prompt: 'x' } }),
      ).rejects.toMatchObject({ status: 402, code: 'insufficient_credits', exitCode: 3 });
    } finally {
      await poor.close();
    }
  });
});

describe('faults', () => {
  it('a create whose answer is lost to a reset is replayed with the same key and charged once', async () => {
    await env.emulator.admin.scriptFaults([
      { fault: 'reset-after-commit', endpoint: 'createGeneration' },
    ]);
    const key = 'reset-after-commit-1';
    const queued = await client.createGeneration(
      'flux-portrait',
      { input: { prompt: 'reset' } },
      { idempotencyKey: key },
    );
    expect(queued.replayed).toBe(true);
    expect(env.events.at(-1)).toMatchObject({ endpoint: 'createGeneration', reason: 'network' });
    const charges = (await env.emulator.admin.ledger(env.accountId)).filter(
      (e) => e.type === 'charge' && e.idempotencyKey === key,
    );
    expect(charges).toHaveLength(1);
    expect(charges[0]!.generationIds).toEqual(queued.ids);
  });

  it('waits out Retry-After: the emulator saw no early request', async () => {
    await env.emulator.admin.scriptFaults([{ fault: 'rate-limit-burst', endpoint: 'getAccount' }]);
    const started = Date.now();
    await client.getAccount();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(env.events.at(-1)).toMatchObject({ reason: 'rate-limited', delayMs: 1000, status: 429 });
    const stats = await env.emulator.admin.stats();
    expect(stats.faults.some((f) => f.fault === 'rate-limit-burst')).toBe(true);
    expect(stats.earlyRequests).toEqual([]);
  });

  it('control: a client that ignores Retry-After is caught by the early-request counter', async () => {
    const hasty = createClient({
      baseUrl: env.emulator.baseUrl,
      apiKey: env.apiKey,
      gate: { acquire: async () => {}, feedback: () => {} },
      sleep: async () => {},
    });
    try {
      await env.emulator.admin.scriptFaults([
        { fault: 'rate-limit-burst', endpoint: 'getAccount' },
      ]);
      await hasty.getAccount();
      expect((await env.emulator.admin.stats()).earlyRequests.length).toBeGreaterThan(0);
    } finally {
      await hasty.close();
      await env.emulator.admin.reset();
    }
  });

  it('a 5xx storm ends in a typed error after the bounded retries', async () => {
    const before = (await env.emulator.admin.stats()).faults.length;
    await env.emulator.admin.scriptFaults([
      { fault: 'error-503', endpoint: 'listModels', times: 10 },
    ]);
    const error = await client.listModels().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, exitCode: 4 });
    const stats = await env.emulator.admin.stats();
    expect(stats.faults.length - before).toBe(5);
    await env.emulator.admin.reset();
  });

  it('a reset before handling surfaces as NetworkError once retries run out', async () => {
    await env.emulator.admin.scriptFaults([
      { fault: 'reset-before', endpoint: 'listInfluencers', times: 5 },
    ]);
    await expect(client.listInfluencers()).rejects.toBeInstanceOf(NetworkError);
  });

  it('a missing required field and malformed JSON are ContractErrors', async () => {
    await env.emulator.admin.scriptFaults([{ fault: 'missing-field', endpoint: 'getAccount' }]);
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContractError);
    expect((error as ContractError).path).not.toBe('');
    await env.emulator.admin.scriptFaults([{ fault: 'malformed-json', endpoint: 'getAccount' }]);
    await expect(client.getAccount()).rejects.toThrow(/malformed JSON/);
  });

  it('never follows a redirect, so the key never reaches the other origin', async () => {
    await env.emulator.admin.scriptFaults([{ fault: 'redirect', endpoint: 'getAccount' }]);
    await expect(client.getAccount()).rejects.toMatchObject({ status: 307 });
    expect((await env.emulator.admin.stats()).uploadAuthorization).toEqual([]);
  });

  it('stops reading a huge body', async () => {
    await env.emulator.admin.scriptFaults([{ fault: 'huge-body', endpoint: 'listModels' }]);
    await expect(client.listModels()).rejects.toThrow(/exceeds/);
  });

  it('kept the key out of every log line', () => {
    expect(env.logLines.length).toBeGreaterThan(10);
    expect(env.logLines.join('')).not.toContain(env.apiKey);
  });
});
