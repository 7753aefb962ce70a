/** Shared gates and a real redis-server for the shared-limits tests; everything is closed after each test. */
import { randomUUID } from 'node:crypto';
import { afterEach } from 'vitest';
import { type RateLimits, SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { createRedisGate, type RateGate, type RedisGateOptions } from '../../src/limits/index.js';
import { type RunningRedis, startRedis } from '../helpers/redis-server.js';

const gates: RateGate[] = [];
const servers: RunningRedis[] = [];

afterEach(async () => {
  for (const gate of gates.splice(0)) gate.close();
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
