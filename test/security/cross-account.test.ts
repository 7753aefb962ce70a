/**
 * Resources of account A are invisible and unusable to account B: reading A's
 * generation or training with B's key is 404, and B cannot use A's uploaded
 * asset or A's output as an input. Nothing is charged to B for the attempts.
 * Also: a run of B whose job names A's influencer stops before spending.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, createClient, type ServiceClient } from '../../src/api/index.js';
import { REPO, runCliCaptured, tempDir, until } from '../helpers/index.js';
import { emulator, LIMITS, writeJob } from './helpers.js';

async function expectRefused(
  call: Promise<unknown>,
  statuses: readonly number[],
): Promise<ApiError> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ApiError);
  expect(statuses).toContain((error as ApiError).status);
  return error as ApiError;
}

describe('cross-account resources are refused', () => {
  it("B cannot read or use A's generations, trainings, assets and influencers", async () => {
    const em = await emulator();
    const [a, b] = em.accounts;
    if (!a || !b) throw new Error('two accounts expected');
    const clients: ServiceClient[] = [];
    const clientA = createClient({ baseUrl: em.baseUrl, apiKey: a.apiKey });
    const clientB = createClient({ baseUrl: em.baseUrl, apiKey: b.apiKey });
    clients.push(clientA, clientB);
    try {
      // A: an uploaded asset, a training from it, an image generation.
      const png = await readFile(path.join(REPO, 'examples/influencer-series/refs/ava-1.png'));
      const presign = await clientA.presignAsset({ mimeType: 'image/png', sizeBytes: png.length });
      await clientA.upload(presign, png);
      const training = await clientA.createTraining(
        {
          name: 'Ava',
          style: 'realistic',
          gender: 'female',
          assetUrls: [presign.assetUrl],
          consentAcknowledged: true,
        },
        { idempotencyKey: 'cross-account-training-1' },
      );
      const image = await clientA.createGeneration('flux-portrait', {
        input: { prompt: 'a portrait', aspectRatio: '9:16' },
      });
      const imageId = image.ids[0];
      if (!imageId) throw new Error('no generation id');
      const done = await until(
        async () => {
          const g = await clientA.getGeneration('image', imageId);
          return g.terminal ? g : undefined;
        },
        { timeoutMs: 10_000, what: "A's image" },
      );
      expect(String(done.status).toLowerCase()).toBe('success');
      const influencer = await until(
        async () => {
          const t = await clientA.getTraining(training.trainingId);
          return t.terminal ? t : undefined;
        },
        { timeoutMs: 10_000, what: "A's training" },
      );
      expect(influencer.ready).toBe(true);
      const influencerId = influencer.influencerId;

      const ledgerBBefore = await em.admin.ledger(b.id);

      // Reads: 404, as if the id did not exist.
      await expectRefused(clientB.getGeneration('image', imageId), [404]);
      await expectRefused(clientB.getTraining(training.trainingId), [404]);
      const history = await clientB.listGenerations('image');
      expect(JSON.stringify(history)).not.toContain(imageId);
      const influencersB = await clientB.listInfluencers();
      expect(JSON.stringify(influencersB)).not.toContain(influencerId);

      // Uses: A's asset as an edit input or training image, A's output as an i2v source.
      await expectRefused(
        clientB.createGeneration('nano-edit', {
          input: { prompt: 'studio', image: presign.assetUrl },
        }),
        [400, 403, 404],
      );
      await expectRefused(
        clientB.createTraining(
          {
            name: 'Thief',
            style: 'realistic',
            gender: 'female',
            assetUrls: [presign.assetUrl],
            consentAcknowledged: true,
          },
          { idempotencyKey: 'cross-account-training-2' },
        ),
        [400, 403, 404],
      );
      await expectRefused(
        clientB.createGeneration('kling-i2v', {
          generationId: imageId,
          input: { prompt: 'dolly in', duration: 5 },
        }),
        [400, 403, 404],
      );
      await expectRefused(
        clientB.createGeneration('flux-portrait', {
          influencerId,
          input: { prompt: 'portrait' },
        }),
        [400, 403, 404],
      );
      // Nothing charged to B for any of it.
      expect(await em.admin.ledger(b.id)).toEqual(ledgerBBefore);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it("a run of B whose job edits A's asset URL is refused without charging B", async () => {
    const em = await emulator();
    const [a, b] = em.accounts;
    if (!a || !b) throw new Error('two accounts expected');
    const clientA = createClient({ baseUrl: em.baseUrl, apiKey: a.apiKey });
    let assetUrl: string;
    try {
      const png = await readFile(path.join(REPO, 'examples/influencer-series/refs/ava-2.png'));
      const presign = await clientA.presignAsset({ mimeType: 'image/png', sizeBytes: png.length });
      await clientA.upload(presign, png);
      assetUrl = presign.assetUrl;
    } finally {
      await clientA.close();
    }
    const dir = tempDir('security');
    const jobPath = await writeJob(
      dir,
      `version: 1
name: cross
generations:
  - id: retouch
    model: nano-edit
    input:
      prompt: "studio background"
      image: ${assetUrl}
`,
    );
    const result = await runCliCaptured(
      ['run', jobPath, '--base-url', em.baseUrl, '--limits', LIMITS],
      { IBATCH_API_KEY: b.apiKey },
      dir,
    );
    // The item fails for good (exit 1) with the service's reason; nothing is spent.
    expect(result.code, `${result.stdout}${result.stderr}`).toBe(1);
    expect(result.stderr).toMatch(/input\.image: not an uploaded asset or output of this account/);
    expect(await em.admin.ledger(b.id)).toEqual([]);
  });
});
