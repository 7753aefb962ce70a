/**
 * The shared gate against a real redis-server: several gates (runners) in
 * this process share one account's buckets. Real timers, short windows.
 */
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import type { Bucket } from '../../src/contract/index.js';
import { createGate, GateClosedError, type RateGate } from '../../src/limits/index.js';
import { EXIT, UsageError } from '../../src/shared/index.js';
import { until } from '../helpers/index.js';
import { maxInWindow, settle } from './helpers.js';
import { keyPrefix, newAccountKey, sharedGate, testRedis, testStore } from './redis-helpers.js';

type Store = Awaited<ReturnType<typeof testStore>>;

/**
 * Enqueues the tickets in the order given (one acquire each), then asks for
 * every waiting ticket again and again until all are granted; returns the
 * runners in grant order. With one slot per window exactly one ticket can
 * go each window: the one the script puts first, however the asks interleave.
 */
async function grantOrder(tickets: ReadonlyArray<{ store: Store; runner: string }>) {
  const order: string[] = [];
  const waiting: Array<{ store: Store; runner: string; ticket: string }> = [];
  for (const [i, { store, runner }] of tickets.entries()) {
    const ticket = `${runner}:${i}`;
    if ((await store.acquire(ticket, ['generations'], false)).granted) order.push(runner);
    else waiting.push({ store, runner, ticket });
  }
  while (waiting.length > 0) {
    for (const [i, { store, runner, ticket }] of waiting.entries()) {
      if ((await store.acquire(ticket, ['generations'], false)).granted) {
        order.push(runner);
        waiting.splice(i, 1);
        break;
      }
    }
  }
  return order.join('');
}

/** Acquires in `lanes` concurrent loops until `untilMs`; returns the grant stamps. */
async function run(gate: RateGate, buckets: Bucket[], lanes: number, untilMs: number) {
  const times: number[] = [];
  const stop = gate.on('grant', (event) => times.push(event.at));
  const lane = async () => {
    while (Date.now() < untilMs) await gate.acquire(buckets);
  };
  await Promise.all(Array.from({ length: lanes }, lane));
  stop();
  return times;
}

describe('shared gate over Redis', () => {
  it('three runners together never exceed a bucket in any window, reach the limit, and share fairly', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const W = 500;
    const limits = {
      generations: { count: 10, windowMs: W },
      requests: { count: 100, windowMs: W },
    };
    const gates = [0, 1, 2].map(() =>
      sharedGate(limits, { redisUrl: redis.url, accountKey, marginMs: () => 10 }),
    );
    const started = Date.now();
    const until = started + 3000;
    const perGate = await Promise.all(
      gates.map((g) => run(g, ['requests', 'generations'], 3, until)),
    );
    const all = perGate.flat().sort((a, b) => a - b);
    expect(maxInWindow(all, W)).toBeLessThanOrEqual(10);
    // Steady state after the first burst: >= 0.9 of 10 per W.
    const rate = (all.length - 10) / (all.at(-1)! - all[0]!);
    expect(rate / (10 / W)).toBeGreaterThanOrEqual(0.9);
    const equalShare = all.length / 3;
    for (const times of perGate) expect(times.length).toBeGreaterThanOrEqual(equalShare / 2);
  });

  it('takes every bucket at once: a blocked create holds no requests slot', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const limits = {
      requests: { count: 3, windowMs: 5000 },
      generations: { count: 1, windowMs: 5000 },
    };
    const a = sharedGate(limits, { redisUrl: redis.url, accountKey });
    const b = sharedGate(limits, { redisUrl: redis.url, accountKey });
    await a.acquire(['requests', 'generations']);
    let created = false;
    const createWaits = new Promise((resolve) => b.on('wait', resolve));
    const create = b.acquire(['requests', 'generations']).then(() => {
      created = true;
    });
    await createWaits;
    // 3 requests - 1 taken - 1 claimed by the waiting create: one poll fits, a second does not.
    await a.acquire(['requests']);
    let secondPoll = false;
    const pollWaits = new Promise((resolve) => a.on('wait', resolve));
    const poll = a.acquire(['requests']).then(() => {
      secondPoll = true;
    });
    await pollWaits;
    await settle();
    expect(created).toBe(false);
    expect(secondPoll).toBe(false);
    a.close();
    b.close();
    await expect(create).rejects.toBeInstanceOf(GateClosedError);
    await expect(poll).rejects.toBeInstanceOf(GateClosedError);
  });

  it('a 429 seen by one runner pauses the others until Retry-After elapses', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const a = sharedGate({}, { redisUrl: redis.url, accountKey });
    const b = sharedGate({}, { redisUrl: redis.url, accountKey });
    await a.acquire(['requests']);
    await b.acquire(['requests']);
    const pauses: number[] = [];
    b.on('pause', (event) => pauses.push(event.until));
    a.feedback({ buckets: ['requests'], status: 429, retryAfterMs: 600 });
    const pauseEnd = a.pausedUntil!;
    expect(pauseEnd).toBeGreaterThan(Date.now());
    // b has not heard of it yet: wait until Redis holds it (key layout: src/limits/redis/scripts.ts).
    const probe = new Redis(redis.url);
    try {
      const pause = `${keyPrefix(redis.url, accountKey)}pause`;
      await until(async () => (await probe.exists(pause)) === 1);
    } finally {
      probe.disconnect();
    }
    const grants: number[] = [];
    b.on('grant', (event) => grants.push(event.at));
    a.on('grant', (event) => grants.push(event.at));
    await Promise.all([b.acquire(['requests']), a.acquire(['requests'])]);
    expect(pauses.length).toBeGreaterThanOrEqual(1);
    expect(Math.abs(pauses[0]! - pauseEnd)).toBeLessThan(100);
    for (const at of grants) expect(at).toBeGreaterThanOrEqual(pauseEnd - 20);
  });

  it('X-RateLimit-Remaining below the shared view adds phantoms every runner sees', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const limits = { requests: { count: 10, windowMs: 5000 } };
    const a = sharedGate(limits, { redisUrl: redis.url, accountKey });
    const b = sharedGate(limits, { redisUrl: redis.url, accountKey });
    await a.acquire(['requests']);
    const shrunk = new Promise((resolve) => a.on('shrink', resolve));
    a.feedback({ buckets: ['requests'], status: 200, limit: 10, remaining: 4 });
    expect(await shrunk).toMatchObject({ bucket: 'requests', phantoms: 5, remaining: 4 });
    // b may take the 4 left, not a fifth.
    for (let i = 0; i < 4; i += 1) await b.acquire(['requests']);
    let fifth = false;
    const fifthWaits = new Promise((resolve) => b.on('wait', resolve));
    const pending = b.acquire(['requests']).then(() => {
      fifth = true;
    });
    await fifthWaits;
    expect(fifth).toBe(false);
    expect(b.snapshot().buckets.requests).toMatchObject({ used: 5, phantom: 5, available: 0 });
    b.close();
    await expect(pending).rejects.toBeInstanceOf(GateClosedError);
  });

  it('falls back to local limits when Redis dies, never overspends, and returns when it is back', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const W = 400;
    const limits = { generations: { count: 10, windowMs: W } };
    const events: string[][] = [[], []];
    const gates = [0, 1].map((i) =>
      sharedGate(limits, {
        redisUrl: redis.url,
        accountKey,
        fallbackPeers: 2,
        probeMs: 100,
        commandTimeoutMs: 300,
        onFallback: (event) => events[i]!.push(event.mode),
      }),
    );
    const all: number[] = [];
    for (const gate of gates) gate.on('grant', (event) => all.push(event.at));
    let stop = false;
    const lanes = gates.map(async (gate) => {
      while (!stop) await gate.acquire(['generations']);
    });
    await until(() => all.length >= 15, { timeoutMs: 3000, what: 'shared grants' });
    await redis.kill();
    await until(() => events.every((e) => e.includes('local')), {
      timeoutMs: 3000,
      what: 'both runners to fall back',
    });
    const killedAt = Date.now();
    await until(() => all.filter((t) => t > killedAt).length >= 8, {
      timeoutMs: 4000,
      what: 'local grants',
    });
    await testRedis(redis.port);
    await until(() => events.every((e) => e.at(-1) === 'shared'), {
      timeoutMs: 5000,
      what: 'both back on Redis',
    });
    const backAt = Date.now();
    await until(() => all.filter((t) => t > backAt).length >= 10, {
      timeoutMs: 4000,
      what: 'shared grants again',
    });
    stop = true;
    for (const gate of gates) gate.close();
    await Promise.allSettled(lanes);
    expect(events).toEqual([
      ['local', 'shared'],
      ['local', 'shared'],
    ]);
    all.sort((a, b) => a - b);
    expect(maxInWindow(all, W)).toBeLessThanOrEqual(10);
  });
});

describe('fair order of the acquire script', () => {
  const limits = { generations: { count: 1, windowMs: 60 } };

  it('serves a runner that queues later in turn, not after every earlier ticket', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const a = await testStore({ url: redis.url, accountKey, limits, runner: 'a' });
    const b = await testStore({ url: redis.url, accountKey, limits, runner: 'b' });
    const tickets = [a, a, a, a].map((store) => ({ store, runner: 'a' }));
    tickets.push(...[b, b, b].map((store) => ({ store, runner: 'b' })));
    // One global FIFO would give aaaabbb: b waited behind everything a queued first.
    expect(await grantOrder(tickets)).toBe('abababa');
  });

  it('gives a runner with share 2 two slots for each slot of a share-1 runner while both wait', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const c = await testStore({ url: redis.url, accountKey, limits, runner: 'c', share: 2 });
    const d = await testStore({ url: redis.url, accountKey, limits, runner: 'd' });
    const tickets = Array.from({ length: 6 }, () => ({ store: c, runner: 'c' }));
    tickets.push(...[d, d, d].map((store) => ({ store, runner: 'd' })));
    // Start tags c: 0 .5 1 1.5 2 2.5, d: 0 1 2 (ties by arrival).
    expect(await grantOrder(tickets)).toBe('cdccdccdc');
  });

  it("lets a dead runner's waiting ticket lapse instead of blocking the queue", async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const slow = { generations: { count: 1, windowMs: 200 } };
    const live = await testStore({ url: redis.url, accountKey, limits: slow, runner: 'live' });
    const dead = await testStore({
      url: redis.url,
      accountKey,
      limits: slow,
      runner: 'dead',
      leaseMs: 300,
    });
    expect((await live.acquire('live:1', ['generations'], false)).granted).toBe(true);
    // The dead runner queues (ahead of live's next ticket by start tag), then never asks again.
    expect((await dead.acquire('dead:1', ['generations'], false)).granted).toBe(false);
    const started = Date.now();
    const next = await until(
      async () => ((await live.acquire('live:2', ['generations'], false)).granted ? 1 : 0),
      { timeoutMs: 5000, what: "live's ticket after the dead one's lease" },
    );
    expect(next).toBe(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('joins at the oldest grant still in the window, not at one whose slot a shrink removed', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const prefix = keyPrefix(redis.url, accountKey);
    const store = (runner: string, windowMs: number) =>
      testStore({
        url: redis.url,
        accountKey,
        limits: { generations: { count: 4, windowMs } },
        runner,
      });
    // Runner a's short slots expire; its long ones (another store, same runner)
    // outlive the test, so nothing frees while b queues.
    const short = await store('a', 200);
    const long = await store('a', 60_000);
    const b = await store('b', 60_000);
    const grant = async (s: Store, ticket: string) =>
      expect((await s.acquire(ticket, ['generations'], false)).granted).toBe(true);
    await grant(short, 'a:0');
    await grant(short, 'a:1');
    await grant(long, 'a:2');
    // Start tags 0, .25, .5; wait (on the server's clock) until a:0 and a:1 have expired.
    const probe = new Redis(redis.url);
    try {
      await until(async () => {
        const [seconds, micros] = await probe.time();
        const now = Number(seconds) * 1000 + Number(micros) / 1000;
        return (await probe.zcount(`${prefix}log:generations`, '-inf', now)) === 2;
      });
      // X-RateLimit-Remaining of 4 adds no phantom; the shrink drops the expired slots.
      expect(await short.shrink('generations', 4, 'p:')).toEqual({ added: 0, phantoms: 0 });
      for (const ticket of ['a:3', 'a:4', 'a:5']) await grant(long, ticket);
      expect((await b.acquire('b:0', ['generations'], false)).granted).toBe(false);
      // b starts at a:2's tag: 4 tickets (one window) before a's next at 1.5,
      // not 6 from a:0's tag 0.
      expect(await probe.hget(`${prefix}tickets`, 'b:0')).toBe('0.5@2');
    } finally {
      probe.disconnect();
    }
  });
});

describe('key layout', () => {
  it('keeps apart from runners of the earlier layout (tickets "1,2" under ibatch:{account}:)', async () => {
    const redis = await testRedis();
    const accountKey = newAccountKey();
    const old = `ibatch:{${accountKey}}:`;
    const probe = new Redis(redis.url);
    try {
      // A runner of ibatch before fair sharing, waiting on the same account.
      await probe
        .multi()
        .zadd(`${old}queue`, 1, 'old:1')
        .hset(`${old}tickets`, 'old:1', '1,2')
        .zadd(`${old}leases`, Date.now() + 60_000, 'old:1')
        .set(`${old}seq`, 1)
        .exec();
      const modes: string[] = [];
      const gate = sharedGate(
        { generations: { count: 2, windowMs: 60_000 } },
        { redisUrl: redis.url, accountKey, onFallback: (event) => modes.push(event.mode) },
      );
      let granted = 0;
      let waiting = false;
      gate.on('grant', () => {
        granted += 1;
      });
      gate.on('wait', () => {
        waiting = true;
      });
      const create = () =>
        gate.acquire(['requests', 'generations']).then(
          () => 'granted',
          (error) => (error instanceof GateClosedError ? 'closed' : 'failed'),
        );
      const creates = [create(), create(), create()];
      await until(() => (granted === 2 && waiting) || modes.length > 0, {
        what: 'two grants and a waiting create, or a fallback',
      });
      // This script reads no "1,2" ticket (it would fail on it and fall back to local limits)...
      expect(modes).toEqual([]);
      // ...and writes no "tag@1,2" ticket where the old script reads digits as bucket numbers.
      expect(await probe.hgetall(`${old}tickets`)).toEqual({ 'old:1': '1,2' });
      expect(await probe.hlen(`${keyPrefix(redis.url, accountKey)}tickets`)).toBe(1);
      gate.close();
      expect(await Promise.all(creates)).toEqual(['granted', 'granted', 'closed']);
    } finally {
      probe.disconnect();
    }
  });
});

describe('createGate', () => {
  it('is local without a store and rejects a bad store URL with a usage error', () => {
    const local = createGate(
      {
        requests: { count: 1, windowMs: 1 },
        generations: { count: 1, windowMs: 1 },
        trainings: { count: 1, windowMs: 1 },
        uploads: { count: 1, windowMs: 1 },
      },
      { accountKey: newAccountKey() },
    );
    expect(local.snapshot().buckets.requests.limit).toBe(1);
    local.close();
    for (const store of ['http://127.0.0.1:6379', 'redis//x', 'redis://', 'http://:pw-9@h:1']) {
      try {
        createGate({} as never, { store, accountKey: newAccountKey() });
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(UsageError);
        expect((error as UsageError).exitCode).toBe(EXIT.invalid);
        // The message names the URL without its password.
        expect((error as UsageError).message).not.toContain('pw-9');
      }
    }
  });

  it('refuses an API key as the account key', () => {
    expect(() =>
      createGate({} as never, {
        store: 'redis://127.0.0.1:1',
        accountKey: 'ifk_live_abcdefghijkl',
      }),
    ).toThrow(UsageError);
  });
});
