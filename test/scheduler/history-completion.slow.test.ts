/**
 * A single-output generation whose history entry proves its
 * success completes from the shared history poll, with no read by id; every
 * uncertain case still reads it (docs/polling.md). Requests are counted by
 * the emulator (`requestsByEndpoint` of its admin stats), not by the client.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerationStatus, Kind } from '../../src/contract/index.js';
import { generationOutcome, outputUrls } from '../../src/contract/index.js';
import type { Behaviour, FaultKind, RunningEmulator } from '../../src/emulator/index.js';
import { readManifest } from '../../src/outputs/index.js';
import { CompletionWatcher } from '../../src/scheduler/index.js';
import { type EmulatorClient, startEmulatorClient } from '../api/helpers/emulator-client.js';
import { runCliCaptured, said, testEmulator } from '../helpers/index.js';
import { envFor, workspace } from './helpers.js';

const FAST = {
  timeScale: 100,
  latency: { 'flux-portrait': [2000, 4000] as [number, number] },
  rateLimits: {
    requests: { count: 10_000, windowMs: 60_000 },
    generations: { count: 1000, windowMs: 60_000 },
  },
};

/** The first account's authenticated requests by endpoint id, from the emulator. */
async function requestsBy(em: RunningEmulator): Promise<Record<string, number>> {
  const stats = await em.admin.stats();
  const mine = stats.accounts.find((a) => a.id === em.accounts[0]?.id);
  if (!mine) throw new Error('no stats for the account');
  return mine.requestsByEndpoint;
}

/** Creates one generation and watches it as single-output until it settles. */
async function watchOne(
  env: EmulatorClient,
  options: { kind?: Kind; modelId?: string; completeFromHistory?: boolean } = {},
): Promise<GenerationStatus> {
  const created = await env.client.createGeneration(options.modelId ?? 'flux-portrait', {
    input: { prompt: 'waves' },
  });
  const watcher = new CompletionWatcher(env.client, {
    minGapMs: 20,
    maxGapMs: 60,
    ...(options.completeFromHistory === undefined
      ? {}
      : { completeFromHistory: options.completeFromHistory }),
  });
  try {
    return await watcher.watch(options.kind ?? 'image', created.ids[0] ?? '', {
      expectedAt: Date.now() + 30,
      singleOutput: true,
    });
  } finally {
    watcher.stop();
  }
}

describe('CompletionWatcher: completing from the history', () => {
  it('completes single-copy images with no read by id, as the read would have', async () => {
    const env = await startEmulatorClient(FAST);
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const created = await env.client.createGeneration('flux-portrait', {
        input: { prompt: `portrait ${i}` },
      });
      ids.push(created.ids[0] ?? '');
    }
    const watcher = new CompletionWatcher(env.client, { minGapMs: 20, maxGapMs: 60 });
    const now = Date.now();
    const settled = await Promise.all(
      ids.map((id) => watcher.watch('image', id, { expectedAt: now + 30, singleOutput: true })),
    );
    watcher.stop();
    const counts = await requestsBy(env.emulator);
    expect(counts.getImage ?? 0).toBe(0);
    expect(counts.listGenerations).toBeGreaterThan(0);
    // What the history gave is what a read by id says, in every field the run uses.
    for (const status of settled) {
      const read = await env.client.getGeneration('image', status.id);
      expect(generationOutcome(status)).toBe('succeeded');
      expect(generationOutcome(read)).toBe('succeeded');
      expect(outputUrls(status)).toEqual(outputUrls(read));
      expect({ ready: status.ready, terminal: status.terminal, refunded: status.refunded }).toEqual(
        { ready: read.ready, terminal: read.terminal, refunded: read.refunded },
      );
    }
  });

  it('reads every generation by id when switched off (completeFromHistory: false)', async () => {
    const env = await startEmulatorClient(FAST);
    const status = await watchOne(env, { completeFromHistory: false });
    expect(generationOutcome(status)).toBe('succeeded');
    expect((await requestsBy(env.emulator)).getImage).toBe(1);
  });

  // Each uncertain case: the history entry does not prove a success, so the
  // generation is read by id, and the outcome is the read's.
  it.each<[string, Kind, string, FaultKind | undefined, Partial<Behaviour>, string]>([
    [
      'a safety-blocked image (status Blocked)',
      'image',
      'flux-portrait',
      'safety-block',
      {},
      'blocked',
    ],
    [
      'a safety block shown as success without URL',
      'image',
      'flux-portrait',
      'safety-block',
      { safetyBlock: 'success-no-url' },
      'blocked',
    ],
    [
      'a refunded safety block (status Failed)',
      'image',
      'flux-portrait',
      'safety-block',
      { safetyBlock: 'refunded' },
      'failed',
    ],
    ['a failed and refunded image', 'image', 'flux-portrait', 'generation-fail', {}, 'failed'],
    ['a safety-blocked video', 'video', 'veo-lite-audio', 'safety-block', {}, 'blocked'],
  ])('%s is read by id', async (_what, kind, modelId, fault, behaviour, outcome) => {
    const env = await startEmulatorClient({ ...FAST, behaviour });
    if (fault) {
      await env.emulator.admin.scriptFaults([{ endpoint: 'createGeneration', fault }]);
    }
    const status = await watchOne(env, { kind, modelId });
    expect(generationOutcome(status)).toBe(outcome);
    if (outcome === 'failed') expect(status.refunded).toBe(true);
    const counts = await requestsBy(env.emulator);
    expect(counts[kind === 'image' ? 'getImage' : 'getVideo']).toBe(1);
  });

  it('an unknown status spelling in the history (Succeeded) is read by id', async () => {
    const env = await startEmulatorClient(FAST);
    // Every history answer spells the success another way (Succeeded, not success).
    await env.emulator.admin.scriptFaults([
      { endpoint: 'listGenerations', fault: 'unknown-status', times: 1000 },
    ]);
    const status = await watchOne(env);
    expect(generationOutcome(status)).toBe('succeeded');
    expect((await requestsBy(env.emulator)).getImage).toBe(1);
  });

  it('a generation not marked single-output (several copies) is read by id', async () => {
    const env = await startEmulatorClient(FAST);
    const created = await env.client.createGeneration('flux-portrait', {
      input: { prompt: 'portrait' },
    });
    const watcher = new CompletionWatcher(env.client, { minGapMs: 20, maxGapMs: 60 });
    const id = created.ids[0] ?? '';
    // A second watcher of the same id that is not single-output wins.
    const one = watcher.watch('image', id, { expectedAt: Date.now() + 30, singleOutput: true });
    const two = watcher.watch('image', id, { expectedAt: Date.now() + 30 });
    await Promise.all([one, two]);
    watcher.stop();
    expect((await requestsBy(env.emulator)).getImage).toBe(1);
  });
});

const job = (copies: number) => `version: 1
name: history-${copies}
output: out
generations:
  - id: portraits
    model: flux-portrait
    copies: ${copies}
    matrix:
      look: [calm, bold, warm]
    input:
      prompt: "a portrait, {{ look }}"
`;

describe('ibatch run: which generations are read by id', () => {
  const SCALE = 60;

  it('a single-copy image campaign reads none by id; its manifest is whole', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(job(1));
    const run = await runCliCaptured(['run', ws.jobPath], envFor(em, SCALE), ws.dir);
    expect(run.code, said(run)).toBe(0);
    const counts = await requestsBy(em);
    expect(counts.getImage ?? 0).toBe(0);
    expect(counts.createGeneration).toBe(3);
    const rows = readManifest(path.join(ws.dir, 'out'));
    expect(rows).toHaveLength(3);
    for (const row of rows) {
      expect(row).toMatchObject({ status: 'succeeded', refunded: false });
      expect(row.creditsCost).toBeGreaterThan(0);
      expect(row.file && row.sha256 && row.url && row.generationId).toBeTruthy();
    }
  }, 60_000);

  it('a two-copy campaign still reads its generations by id', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(job(2));
    const run = await runCliCaptured(['run', ws.jobPath], envFor(em, SCALE), ws.dir);
    expect(run.code, said(run)).toBe(0);
    const counts = await requestsBy(em);
    // Two ids per item, each read (the first id's read does not carry both URLs here).
    expect(counts.getImage).toBeGreaterThanOrEqual(6);
    expect(
      readManifest(path.join(ws.dir, 'out')).filter((r) => r.status === 'succeeded'),
    ).toHaveLength(6);
  }, 60_000);
});
