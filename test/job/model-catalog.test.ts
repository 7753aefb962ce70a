import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadModelCatalog, ModelCatalogError } from '../../src/job/index.js';
import { tempDir } from '../helpers/index.js';
import { emulatorCatalog } from './helpers.js';

function counter() {
  const models = [...emulatorCatalog().values()];
  const lister = { calls: 0, listModels: async () => ({ models }) };
  lister.listModels = async () => {
    lister.calls++;
    return { models };
  };
  return lister;
}

describe('model contract cache', () => {
  it('reuses the cache within the TTL, refetches after it, and serves --offline from it', async () => {
    const dir = tempDir('job');
    const cacheFile = join(dir, '.ibatch', 'models.json');
    const lister = counter();
    let now = 1_000;
    const opts = {
      lister,
      cacheFile,
      baseUrl: 'http://127.0.0.1:1/api/v1',
      ttlMs: 100,
      now: () => now,
    };
    expect((await loadModelCatalog(opts)).from).toBe('service');
    now += 50;
    expect((await loadModelCatalog(opts)).from).toBe('cache');
    now += 100;
    expect((await loadModelCatalog(opts)).from).toBe('service');
    expect(lister.calls).toBe(2);
    const offline = await loadModelCatalog({ cacheFile, offline: true });
    expect(offline.from).toBe('cache');
    expect(offline.catalog.has('flux-portrait')).toBe(true);
  });

  it('keeps one entry per service, whatever the spelling of its base URL', async () => {
    const cacheFile = join(tempDir('job'), '.ibatch', 'models.json');
    const lister = counter();
    const opts = { lister, cacheFile, now: () => 1_000 };
    expect((await loadModelCatalog({ ...opts, baseUrl: 'http://127.0.0.1:9/api/v1' })).from).toBe(
      'service',
    );
    const other = await loadModelCatalog({ ...opts, baseUrl: 'HTTP://LOCALHOST.:9/api/v1/' });
    expect(other.from).toBe('cache');
    expect(lister.calls).toBe(1);
  });

  it('fails clearly offline without a cache', async () => {
    const dir = tempDir('job');
    const error = await loadModelCatalog({
      cacheFile: join(dir, 'none.json'),
      offline: true,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCatalogError);
    expect((error as ModelCatalogError).exitCode).toBe(2);
  });
});
