/**
 * Human tables show what the service returned with its control characters
 * escaped: an influencer named with a terminal escape sequence does not
 * retitle the window or clear the screen of the person running `ibatch influencers`.
 */
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/index.js';
import { pngFor } from '../../src/emulator/index.js';
import { emulatorEnv, spawnCli, tempDir, testEmulator } from '../helpers/index.js';

const HOSTILE = 'Ava\x1b]0;pwned\x07\x1b[2J';

describe('a service-returned name with control characters', () => {
  it('reaches `ibatch influencers` escaped, not raw', async () => {
    const emulator = await testEmulator();
    const env = emulatorEnv(emulator);
    const client = createClient({ baseUrl: emulator.baseUrl, apiKey: env.IBATCH_API_KEY ?? '' });
    const bytes = pngFor('ref-hostile');
    const presign = await client.presignAsset({ mimeType: 'image/png', sizeBytes: bytes.length });
    const { assetUrl } = await client.upload(presign, bytes);
    await client.createTraining(
      {
        name: HOSTILE,
        style: 'realistic',
        gender: 'female',
        assetUrls: [assetUrl],
        consentAcknowledged: true,
      },
      { idempotencyKey: 'train-hostile-1' },
    );
    const run = spawnCli(['influencers'], {
      cwd: tempDir('table'),
      env: { ...env, NO_COLOR: '1' },
    });
    const { code, stdout } = await run.exited;
    expect(code).toBe(0);
    expect(stdout).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f]/);
    expect(stdout).toContain('Ava\\x1b]0;pwned\\x07\\x1b[2J');
  });
});
