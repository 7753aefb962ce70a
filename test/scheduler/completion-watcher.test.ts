import { describe, expect, it } from 'vitest';
import type { ServiceClient } from '../../src/api/index.js';
import type { GenerationHistory, GenerationStatus, Kind } from '../../src/contract/index.js';
import {
  CompletionWatcher,
  GenerationDeadlineError,
  type GenerationReader,
} from '../../src/scheduler/index.js';
import { type EmulatorClient, startEmulatorClient } from '../api/helpers/emulator-client.js';

let env: EmulatorClient | undefined;

/** Counts the watcher's requests by kind while passing them to the real client. */
function counting(client: ServiceClient) {
  const counts = { history: 0, status: 0 };
  const reader: GenerationReader = {
    listGenerations: (kind: Kind, options) => {
      counts.history += 1;
      return client.listGenerations(kind, options) as Promise<GenerationHistory>;
    },
    getGeneration: (kind: Kind, id: string, options) => {
      counts.status += 1;
      return client.getGeneration(kind, id, options) as Promise<GenerationStatus>;
    },
  };
  return { reader, counts };
}

async function createImages(client: ServiceClient, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const created = await client.createGeneration('flux-portrait', {
      input: { prompt: `portrait ${i}` },
    });
    ids.push(created.ids[0] ?? '');
  }
  return ids;
}

describe('CompletionWatcher against the emulator', () => {
  it('detects every completion with one status read per generation plus shared history polls', async () => {
    env = await startEmulatorClient({
      timeScale: 50,
      latency: { 'flux-portrait': [4000, 8000] },
      rateLimits: {
        requests: { count: 10_000, windowMs: 60_000 },
        generations: { count: 1000, windowMs: 60_000 },
      },
    });
    const { reader, counts } = counting(env.client);
    const watcher = new CompletionWatcher(reader, { minGapMs: 40, maxGapMs: 200 });
    const ids = await createImages(env.client, 12);
    const now = Date.now();
    const statuses = await Promise.all(
      ids.map((id) => watcher.watch('image', id, { expectedAt: now + 80 })),
    );
    expect(statuses.map((s) => s.id).sort()).toEqual([...ids].sort());
    expect(statuses.every((s) => s.terminal && s.ready)).toBe(true);
    // Each generation is read by id once (no read while it was still pending).
    expect(counts.status).toBe(12);
    // History polls are shared: far fewer than one per generation per poll.
    expect(counts.history).toBeLessThan(12);
    watcher.stop();
  });

  it('reads an id by id when the history page does not show it', async () => {
    env = await startEmulatorClient({ timeScale: 100 });
    const [id] = await createImages(env.client, 1);
    const empty: GenerationReader = {
      listGenerations: async (kind) => ({ kind, generations: [] }),
      getGeneration: (kind, gid, options) => env!.client.getGeneration(kind, gid, options),
    };
    const watcher = new CompletionWatcher(empty, {
      minGapMs: 20,
      maxGapMs: 50,
      missesBeforeDirectRead: 2,
    });
    const status = await watcher.watch('image', id ?? '', { expectedAt: Date.now() });
    expect(status.terminal).toBe(true);
    watcher.stop();
  });

  it('gives up on a generation that never becomes terminal at its deadline', async () => {
    env = await startEmulatorClient({ timeScale: 100 });
    await env.emulator.admin.scriptFaults([
      { endpoint: 'createGeneration', fault: 'never-terminal', times: 1 },
    ]);
    const [id] = await createImages(env.client, 1);
    const watcher = new CompletionWatcher(env.client, { minGapMs: 20, maxGapMs: 50 });
    const started = Date.now();
    await expect(
      watcher.watch('image', id ?? '', { expectedAt: started, deadlineAt: started + 400 }),
    ).rejects.toBeInstanceOf(GenerationDeadlineError);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    watcher.stop();
  });

  it('rejects pending watches when stopped', async () => {
    const never: GenerationReader = {
      listGenerations: async (kind) => ({ kind, generations: [] }),
      getGeneration: async (kind, id) => ({
        id,
        kind,
        status: 'processing',
        ready: false,
        terminal: false,
        refunded: false,
      }),
    };
    const watcher = new CompletionWatcher(never, { minGapMs: 10, maxGapMs: 20 });
    const pending = watcher.watch('video', 'x', { expectedAt: Date.now() + 10_000 });
    watcher.stop(new Error('stopped by test'));
    await expect(pending).rejects.toThrow('stopped by test');
  });

  it('rejects a watch that starts after the stop (a 202 that raced a hard stop) instead of hanging', async () => {
    const reader: GenerationReader = {
      listGenerations: async () => {
        throw new Error('no poll may start after the stop');
      },
      getGeneration: async () => {
        throw new Error('no poll may start after the stop');
      },
    };
    const watcher = new CompletionWatcher(reader, { minGapMs: 10, maxGapMs: 20 });
    watcher.stop(new Error('stopped by test'));
    await expect(watcher.watch('image', 'late', { expectedAt: Date.now() })).rejects.toThrow(
      'stopped by test',
    );
  });
});
