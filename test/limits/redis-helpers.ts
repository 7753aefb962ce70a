/**
 * Shared gates, bare stores (one runner's script calls) and a real
 * redis-server for the shared-limits tests; everything is closed after each test.
 */
import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { type RateLimits, SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { createRedisGate, type RateGate, type RedisGateOptions } from '../../src/limits/index.js';
import { resolveRedisOptions } from '../../src/limits/redis/options.js';
import { RedisStore } from '../../src/limits/redis/store.js';
import { type RunningRedis, startRedis } from '../helpers/redis-server.js';

const gates: RateGate[] = [];
const stores: RedisStore[] = [];
const servers: RunningRedis[] = [];

afterEach(async () => {
  for (const gate of gates.splice(0)) gate.close();
  for (const store of stores.splice(0)) store.close();
  await Promise.all(servers.splice(0).map((server) => server.kill()));
});

/** A redis-server killed after the test. */
export async function testRedis(port?: number): Promise<RunningRedis> {
  const server = await startRedis(port === undefined ? {} : { port });
  servers.push(server);
  return server;
}

/** A fresh account key per test, so tests never see each other's slots. */
export const newAccountKey = () => `test-${randomUUID()}`;

export function sharedGate(overrides: Partial<RateLimits>, options: RedisGateOptions): RateGate {
  const gate = createRedisGate({ ...SERVICE_RATE_LIMITS, ...overrides }, options);
  gates.push(gate);
  return gate;
}

/** The key prefix of an account's gate (its layout: src/limits/redis/scripts.ts). */
export const keyPrefix = (url: string, accountKey: string) =>
  resolveRedisOptions(SERVICE_RATE_LIMITS, { redisUrl: url, accountKey }).prefix;

/**
 * One runner's connection to an account's keys, without the gate around it:
 * the acquire script's decisions, ticket by ticket. Slots live `windowMs`.
 */
export async function testStore(input: {
  readonly url: string;
  readonly accountKey: string;
  readonly limits: Partial<RateLimits>;
  readonly runner: string;
  readonly share?: number;
  readonly leaseMs?: number;
}): Promise<RedisStore> {
  const limits = { ...SERVICE_RATE_LIMITS, ...input.limits };
  const store = new RedisStore({
    url: input.url,
    prefix: keyPrefix(input.url, input.accountKey),
    limits,
    slotLifeMs: (bucket) => limits[bucket].windowMs,
    leaseMs: input.leaseMs ?? 10_000,
    runner: input.runner,
    share: input.share ?? 1,
    commandTimeoutMs: 2000,
    onReady: () => {},
    onError: () => {},
  });
  stores.push(store);
  if (!(await store.whenReady(5000))) throw new Error(`no answer from Redis at ${input.url}`);
  return store;
}
