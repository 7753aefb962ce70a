/**
 * Arbitrary service responses fed to the client: whatever status,
 * headers-worth of JSON or garbage the server answers, every client call
 * either resolves with a value that satisfies the contract or rejects with a
 * typed IbatchError. Never an unstructured crash.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type ServiceClient } from '../../src/api/index.js';
import { GenerationStatusSchema } from '../../src/contract/index.js';
import { isIbatchError } from '../../src/shared/index.js';
import { type LocalServer, startLocalServer } from './helpers/local-server.js';

interface Reply {
  status: number;
  body: string;
}

let next: Reply = { status: 200, body: '{}' };
let server: LocalServer;
let client: ServiceClient;

beforeAll(async () => {
  server = await startLocalServer((_req, res) => {
    res.writeHead(next.status, { 'content-type': 'application/json' });
    res.end(next.body);
  });
  client = createClient({
    baseUrl: server.baseUrl,
    apiKey: 'ifk_live_fuzzfuzzfuzzfuzz',
    // No waiting between retries: the fuzz is about parsing, not timing.
    retry: { maxRetries: 0, maxRateLimitRetries: 0, baseDelayMs: 0, maxDelayMs: 0 },
  });
});
afterAll(async () => {
  await client?.close();
  await server?.stop();
});

/** JSON that looks like a generation status some of the time, anything otherwise. */
const statusLike = fc.record(
  {
    id: fc.oneof(fc.string(), fc.integer()),
    kind: fc.oneof(fc.constantFrom('image', 'video'), fc.string()),
    status: fc.oneof(fc.constantFrom('queued', 'success', 'Success', 'RUNNING'), fc.anything()),
    ready: fc.oneof(fc.boolean(), fc.anything()),
    terminal: fc.oneof(fc.boolean(), fc.anything()),
    refunded: fc.oneof(fc.boolean(), fc.anything()),
    urls: fc.oneof(fc.array(fc.webUrl()), fc.anything()),
  },
  { requiredKeys: [] },
);

const body = fc.oneof(
  statusLike.map((v) => JSON.stringify(v)),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc.string(),
  fc.constant(''),
  fc.constant('{"error":'),
);

const status = fc.oneof(fc.constant(200), fc.constantFrom(400, 401, 402, 404, 409, 422, 500, 503));

describe('the client under arbitrary responses', () => {
  it('resolves with a contract-valid status or rejects with a typed error', async () => {
    await fc.assert(
      fc.asyncProperty(status, body, async (code, text) => {
        next = { status: code, body: text };
        try {
          const value = await client.getGeneration('image', 'a-generation-id');
          expect(GenerationStatusSchema.safeParse(value).success).toBe(true);
        } catch (error) {
          expect(isIbatchError(error), String(error)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
