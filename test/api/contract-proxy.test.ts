/**
 * Every client method through the independent OpenAPI validator
 * (test/helpers/contract-proxy.ts): the requests the client sends, and the
 * emulator's answers, must match openapi/service.yaml.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, type ServiceClient } from '../../src/api/index.js';
import { pngFor, type RunningEmulator } from '../../src/emulator/index.js';
import { type ContractProxy, startContractProxy } from '../helpers/contract-proxy.js';
import { testEmulator } from '../helpers/index.js';

let emulator: RunningEmulator;
let proxy: ContractProxy;
let client: ServiceClient;

beforeAll(async () => {
  emulator = await testEmulator({ seed: 3, timeScale: 100 });
  proxy = await startContractProxy(emulator.baseUrl);
  client = createClient({ baseUrl: proxy.baseUrl, apiKey: emulator.accounts[0]!.apiKey });
});
afterAll(async () => {
  await client?.close();
  await proxy?.stop();
});

it('sends only requests the OpenAPI document accepts, for every method', async () => {
  await client.getAccount();
  await client.listInfluencers();
  await client.listModels();
  await client.getModel('flux-portrait');
  const body = { input: { prompt: 'checked' }, copies: 1 };
  await client.previewCredits('flux-portrait', body);
  const queued = await client.createGeneration('flux-portrait', body);
  await client.getGeneration('image', queued.ids[0]!);
  await client.listGenerations('image', { limit: 10 });
  await client.listGenerations('video');
  const bytes = pngFor('proxy');
  const presign = await client.presignAsset({ mimeType: 'image/png', sizeBytes: bytes.length });
  const { assetUrl } = await client.upload(presign, bytes);
  const job = await client.createTraining(
    {
      name: 'Proxy',
      style: 'anime',
      gender: 'male',
      assetUrls: [assetUrl],
      consentAcknowledged: true,
    },
    { idempotencyKey: 'proxy-training-1' },
  );
  await client.getTraining(job.trainingId);
  await expect(client.getModel('missing-model')).rejects.toMatchObject({ status: 404 });

  expect(proxy.requests).toBe(13);
  expect(proxy.violations).toEqual([]);
});
