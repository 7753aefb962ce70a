/**
 * Every request links the client's signal with the call's own (the run's
 * stop signal, alive for the whole run). After the requests, neither holds
 * anything of them: a long run does not pile up one entry per request.
 */
import { getEventListeners } from 'node:events';
import { expect, it } from 'vitest';
import { pngFor } from '../../src/emulator/index.js';
import { entriesHeldBy } from '../helpers/index.js';
import { startEmulatorClient } from './helpers/emulator-client.js';

it('leaves no listener or reference on the long-lived signals after many requests', async () => {
  const process = new AbortController();
  const run = new AbortController();
  const { client } = await startEmulatorClient({}, { signal: process.signal });
  const before = [entriesHeldBy(process.signal), entriesHeldBy(run.signal)];
  for (let i = 0; i < 300; i++) await client.getAccount({ signal: run.signal });
  const bytes = pngFor('signal-links');
  for (let i = 0; i < 20; i++) {
    const presign = await client.presignAsset(
      { mimeType: 'image/png', sizeBytes: bytes.length },
      { signal: run.signal },
    );
    await client.upload(presign, bytes, { signal: run.signal });
  }
  expect(getEventListeners(process.signal, 'abort')).toHaveLength(0);
  expect(getEventListeners(run.signal, 'abort')).toHaveLength(0);
  expect([entriesHeldBy(process.signal), entriesHeldBy(run.signal)]).toEqual(before);
});
