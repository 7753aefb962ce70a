import { describe, expect, it } from 'vitest';
import { until } from '../helpers/index.js';
import { api, emulator } from './helpers.js';

const body = { input: { prompt: 'same' } };

describe('idempotency', () => {
  it('replays the original answer without a new charge, 409s another payload', async () => {
    const em = await emulator();
    const key = em.accounts[0]!.apiKey;
    const headers = { 'idempotency-key': 'job-1/step/0' };
    const first = await api(em, key, 'POST', '/models/sdxl-lite/generations', body, headers);
    const again = await api(
      em,
      key,
      'POST',
      '/models/sdxl-lite/generations',
      { input: { prompt: 'same' } },
      headers,
    );
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    const conflict = await api(
      em,
      key,
      'POST',
      '/models/sdxl-lite/generations',
      { input: { prompt: 'other' } },
      headers,
    );
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
    const otherModel = await api(
      em,
      key,
      'POST',
      '/models/flux-portrait/generations',
      body,
      headers,
    );
    expect(otherModel.status).toBe(409);
    // Keys are per account: the other account may use the same key.
    expect(
      (
        await api(
          em,
          em.accounts[1]!.apiKey,
          'POST',
          '/models/sdxl-lite/generations',
          body,
          headers,
        )
      ).status,
    ).toBe(202);

    await em.admin.setBehaviour({ replayStatus: 200 });
    expect(
      (await api(em, key, 'POST', '/models/sdxl-lite/generations', body, headers)).status,
    ).toBe(200);
    const ledger = await em.admin.ledger(em.accounts[0]!.id);
    expect(ledger.filter((e) => e.type === 'charge')).toHaveLength(1);
    const stats = await em.admin.stats();
    expect(stats.accounts[0]!.counters).toMatchObject({ creates: 1, replays: 2, conflicts: 2 });
    // A replay does not count in the generations bucket.
    expect(stats.accounts[0]!.buckets.generations.total).toBe(1);
    const long = await api(em, key, 'POST', '/models/sdxl-lite/generations', body, {
      'idempotency-key': 'k'.repeat(201),
    });
    expect(long.status).toBe(400);
    expect(long.body.error.message).toMatch(/^Idempotency-Key/);
  });
});

describe('rate limits', () => {
  it('429s with Retry-After past the requests bucket, records early requests and the max window', async () => {
    const em = await emulator({
      rateLimits: { requests: { count: 5, windowMs: 60_000 } },
      timeScale: 60,
    });
    const key = em.accounts[0]!.apiKey;
    const remaining: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await api(em, key, 'GET', '/account');
      expect(r.status).toBe(200);
      expect(r.headers.get('x-ratelimit-limit')).toBe('5');
      remaining.push(r.headers.get('x-ratelimit-remaining') ?? '');
    }
    expect(remaining).toEqual(['4', '3', '2', '1', '0']);
    const limited = await api(em, key, 'GET', '/account');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers.get('retry-after')).toBe('1');
    // Immediately again: early (before the announced Retry-After) and still 429.
    expect((await api(em, key, 'GET', '/account')).status).toBe(429);
    // Another account has its own counters.
    expect((await api(em, em.accounts[1]!.apiKey, 'GET', '/account')).status).toBe(200);
    const stats = await em.admin.stats();
    const mine = stats.accounts[0]!;
    expect(mine.buckets.requests).toMatchObject({
      limit: 5,
      maxInAnyWindow: 5,
      total: 5,
      rejected: 2,
    });
    expect(mine.earlyRequests).toHaveLength(1);
    expect(mine.counters.rateLimited).toBe(2);
    // The window is 1 s at timeScale 60: after Retry-After the request passes.
    await until(
      async () => ((await api(em, key, 'GET', '/account')).status === 200 ? true : undefined),
      { timeoutMs: 3000 },
    );
    expect((await em.admin.stats()).accounts[0]!.buckets.requests.maxInAnyWindow).toBe(5);
  });

  it('limits generations separately and 429s do not count', async () => {
    const em = await emulator({ rateLimits: { generations: { count: 2, windowMs: 60_000 } } });
    const key = em.accounts[0]!.apiKey;
    for (let i = 0; i < 2; i++) {
      expect((await api(em, key, 'POST', '/models/sdxl-lite/generations', body)).status).toBe(202);
    }
    const limited = await api(em, key, 'POST', '/models/sdxl-lite/generations', body);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(59);
    expect((await api(em, key, 'GET', '/account')).body.credits).toBe(25_000 - 4);
    const buckets = (await em.admin.stats()).accounts[0]!.buckets;
    expect(buckets.generations).toMatchObject({ total: 2, rejected: 1, maxInAnyWindow: 2 });
    expect(buckets.requests.total).toBe(3);
  });
});
