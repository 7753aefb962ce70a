import { describe, expect, it } from 'vitest';
import type { FaultKind } from '../../src/emulator/index.js';
import { until } from '../helpers/index.js';
import { api, emulator } from './helpers.js';

const body = { input: { prompt: 'x' } };

describe('scripted faults', () => {
  it('injects 5xx, resets, malformed JSON, missing fields and odd statuses on the next matching requests', async () => {
    const em = await emulator({ timeScale: 1000 });
    const key = em.accounts[0]!.apiKey;
    await em.admin.scriptFaults([
      { endpoint: 'getAccount', fault: 'error-503', times: 2 },
      { endpoint: 'listModels', fault: 'reset-before' },
      { endpoint: 'getModel', fault: 'malformed-json' },
      { endpoint: 'previewCredits', fault: 'missing-field' },
      { endpoint: 'listInfluencers', fault: 'rate-limit-no-header' },
    ]);
    for (let i = 0; i < 2; i++) {
      const r = await api(em, key, 'GET', '/account');
      expect(r.status).toBe(503);
      expect(r.body.error.code).toBe('internal_error');
    }
    expect((await api(em, key, 'GET', '/account')).status).toBe(200);
    await expect(api(em, key, 'GET', '/models')).rejects.toThrow();
    await expect(api(em, key, 'GET', '/models/sdxl-lite')).rejects.toThrow(SyntaxError);
    const preview = await api(em, key, 'POST', '/models/sdxl-lite/preview-credits', body);
    expect(preview.body).not.toHaveProperty('credits');
    const limited = await api(em, key, 'GET', '/influencers');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBeNull();
    const stats = await em.admin.stats();
    expect(stats.faults.map((f) => f.fault)).toEqual([
      'error-503',
      'error-503',
      'reset-before',
      'malformed-json',
      'missing-field',
      'rate-limit-no-header',
    ]);
    expect(stats.pendingFaultScripts).toEqual([]);
  });

  it('reset-after-commit charges once; the idempotent retry replays; a failed generation is refunded', async () => {
    const em = await emulator({ timeScale: 1000 });
    const key = em.accounts[0]!.apiKey;
    await em.admin.scriptFaults([{ endpoint: 'createGeneration', fault: 'reset-after-commit' }]);
    const headers = { 'idempotency-key': 'retry-me' };
    await expect(
      api(em, key, 'POST', '/models/sdxl-lite/generations', body, headers),
    ).rejects.toThrow();
    const retry = await api(em, key, 'POST', '/models/sdxl-lite/generations', body, headers);
    expect(retry.status).toBe(202);
    const ledger = await em.admin.ledger();
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({ type: 'charge', amount: 2, idempotencyKey: 'retry-me' });

    // Scripts of different slots (response vs outcome) would both hit one request: script this one now.
    await em.admin.scriptFaults([{ endpoint: 'createGeneration', fault: 'generation-fail' }]);
    const failing = await api(em, key, 'POST', '/models/sdxl-lite/generations', body);
    const id = failing.body.ids[0];
    const done = await until(async () => {
      const r = await api(em, key, 'GET', `/generations/image/${id}`);
      return r.body.terminal ? r.body : undefined;
    });
    expect(done).toMatchObject({ status: 'failed', refunded: true, ready: false });
    const refunds = (await em.admin.ledger()).filter((e) => e.type === 'refund');
    expect(refunds).toEqual([expect.objectContaining({ amount: 2, generationIds: [id] })]);
    expect((await api(em, key, 'GET', '/account')).body.credits).toBe(25_000 - 2);
  });

  it('shows safety blocks as configured and odd status strings on unknown-status', async () => {
    const em = await emulator({ timeScale: 1000 });
    const key = em.accounts[0]!.apiKey;
    await em.admin.scriptFaults([{ endpoint: 'createGeneration', fault: 'safety-block' }]);
    const created = await api(em, key, 'POST', '/models/seedance-fast/generations', body);
    const path = `/generations/video/${created.body.ids[0]}`;
    const blocked = await until(async () => {
      const r = await api(em, key, 'GET', path);
      return r.body.terminal ? r.body : undefined;
    });
    expect(blocked).toMatchObject({ status: 'blocked', refunded: false, ready: false, url: null });
    await em.admin.scriptFaults([{ endpoint: 'getVideo', fault: 'unknown-status' }]);
    expect((await api(em, key, 'GET', path)).body.status).toBe('CONTENT_FILTERED');
    await em.admin.setBehaviour({ statusCase: 'upper' });
    expect((await api(em, key, 'GET', path)).body.status).toBe('BLOCKED');
  });
});

describe('probabilistic faults', () => {
  async function pattern(seed: number): Promise<string[]> {
    const em = await emulator({
      seed,
      faults: { rates: { 'error-500': 0.2, 'error-502': 0.1, 'rate-limit-burst': 0.1 } },
    });
    const key = em.accounts[0]!.apiKey;
    const out: string[] = [];
    for (let i = 0; i < 40; i++) out.push(String((await api(em, key, 'GET', '/account')).status));
    await em.stop();
    return out;
  }

  it('replays the same fault pattern under the same seed', async () => {
    const a = await pattern(7);
    const b = await pattern(7);
    const c = await pattern(8);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    expect(new Set(a)).toEqual(new Set(['200', '500', '502', '429']));
  });

  it('rejects unknown fault kinds on the admin surface', async () => {
    const em = await emulator();
    await expect(
      em.admin.setFaults({ rates: { nope: 1 } as Partial<Record<FaultKind, number>> }),
    ).rejects.toThrow(/Unknown fault/);
  });
});

describe('hostile faults', () => {
  it('redirects to another origin (recording a forwarded Authorization) and stop() ends stalled requests', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    await em.admin.scriptFaults([
      { endpoint: 'getAccount', fault: 'redirect' },
      { endpoint: 'listModels', fault: 'stall' },
    ]);
    const redirected = await fetch(`${em.baseUrl}/account`, {
      headers: { authorization: `Bearer ${key}` },
      redirect: 'manual',
    });
    expect(redirected.status).toBe(307);
    const location = redirected.headers.get('location')!;
    expect(location.startsWith(em.uploadOrigin)).toBe(true);
    await fetch(location, { headers: { authorization: `Bearer ${key}` } });
    expect((await em.admin.stats()).uploadAuthorization).toHaveLength(1);
    const stalled = api(em, key, 'GET', '/models');
    await until(async () =>
      (await em.admin.stats()).faults.some((f) => f.fault === 'stall') ? true : undefined,
    );
    await em.stop();
    await expect(stalled).rejects.toThrow();
  });
});
