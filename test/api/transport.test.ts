/**
 * Transport behaviours against a scripted loopback server: timeouts, resets,
 * malformed and oversized bodies, redirects, Retry-After timing, the key.
 */
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  type ClientEvent,
  type ClientOptions,
  ContractError,
  createClient,
  NetworkError,
  type ServiceClient,
  TimeoutError,
} from '../../src/api/index.js';
import { createLogger, UsageError } from '../../src/shared/index.js';
import { USER_AGENT } from '../../src/version.js';
import {
  ACCOUNT,
  type Handler,
  json,
  type LocalServer,
  startLocalServer,
} from './helpers/local-server.js';

const KEY = 'ifk_live_transport_test_secret_0123456789';
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  handler: Handler,
  options: Partial<ClientOptions> = {},
): Promise<{ server: LocalServer; client: ServiceClient; events: ClientEvent[] }> {
  const server = await startLocalServer(handler);
  const events: ClientEvent[] = [];
  const client = createClient({
    baseUrl: server.baseUrl,
    apiKey: KEY,
    retry: { baseDelayMs: 5, maxDelayMs: 20 },
    onEvent: (e) => events.push(e),
    ...options,
  });
  cleanups.push(
    () => server.stop(),
    () => client.close(),
  );
  return { server, client, events };
}

describe('requests', () => {
  it('sends the key, the User-Agent, and keeps unknown fields', async () => {
    const { server, client } = await setup((_req, res) =>
      json(
        res,
        200,
        { ...ACCOUNT, tier: 'gold' },
        { 'x-ratelimit-limit': '120', 'x-ratelimit-remaining': '119' },
      ),
    );
    const account = await client.getAccount();
    expect(account).toMatchObject({ credits: 100, tier: 'gold' });
    expect(server.requests[0]).toMatchObject({ method: 'GET', url: '/api/v1/account' });
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(server.requests[0]?.headers['user-agent']).toBe(USER_AGENT);
    expect(client.rateLimit).toMatchObject({ limit: 120, remaining: 119 });
  });

  it('keeps unknown error codes verbatim with details and request id; never retries 4xx', async () => {
    const { server, client, events } = await setup((_req, res) =>
      json(
        res,
        422,
        { error: { code: 'weird_code', message: 'odd', details: { f: 1 } } },
        { 'x-request-id': 'req-7' },
      ),
    );
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 422,
      code: 'weird_code',
      details: { f: 1 },
      requestId: 'req-7',
      exitCode: 2,
    });
    expect(server.requests).toHaveLength(1);
    expect(events).toHaveLength(0);
  });

  it('never retries a 409 and maps it to exit 2', async () => {
    const { server, client } = await setup((_req, res) =>
      json(res, 409, { error: { code: 'idempotency_conflict', message: 'different payload' } }),
    );
    const error = await client
      .createGeneration('m', { input: { prompt: 'x' } }, { idempotencyKey: 'k-1' })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 409, code: 'idempotency_conflict', exitCode: 2 });
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.headers['idempotency-key']).toBe('k-1');
  });

  it('ends a 5xx storm in a typed error after the bounded retries', async () => {
    const { server, client, events } = await setup((_req, res) =>
      json(res, 503, { error: { code: 'internal_error', message: 'down' } }),
    );
    const error = await client.listModels().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 503, exitCode: 4 });
    expect(server.requests).toHaveLength(5);
    expect(events.map((e) => [e.attempt, e.reason, e.status])).toEqual([
      [2, 'server-error', 503],
      [3, 'server-error', 503],
      [4, 'server-error', 503],
      [5, 'server-error', 503],
    ]);
  });

  it('retries a connection reset, then succeeds', async () => {
    let n = 0;
    const { server, client, events } = await setup((_req, res, socket) => {
      if (n++ === 0) socket.destroy();
      else json(res, 200, ACCOUNT);
    });
    await expect(client.getAccount()).resolves.toMatchObject({ plan: 'pro' });
    expect(server.requests).toHaveLength(2);
    expect(events[0]).toMatchObject({ reason: 'network', attempt: 2 });
  });

  it('raises NetworkError when the connection is refused', async () => {
    const { server, client } = await setup(() => {}, { retry: { maxRetries: 1, baseDelayMs: 1 } });
    await server.stop();
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).toMatchObject({ causeCode: 'ECONNREFUSED', exitCode: 4 });
  });

  it('raises TimeoutError when headers do not arrive in time', async () => {
    const { client } = await setup(() => {}, {
      headersTimeoutMs: 150,
      retry: { maxRetries: 1, baseDelayMs: 1 },
    });
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error).toMatchObject({ phase: 'headers', exitCode: 4 });
  });
});

describe('contract', () => {
  it('raises ContractError on malformed JSON', async () => {
    const { client } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"plan": "pro",');
    });
    await expect(client.getAccount()).rejects.toThrow(/malformed JSON/);
  });

  it('names the missing field and what was being done (the endpoint stays on the error)', async () => {
    const { credits: _omit, ...rest } = ACCOUNT;
    const { client } = await setup((_req, res) => json(res, 200, rest));
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ContractError);
    expect(error).toMatchObject({ path: 'credits', endpoint: 'getAccount', exitCode: 4 });
    expect((error as Error).message).toMatch(/^reading the account: .*`credits`/);
    expect((error as Error).message).not.toContain('getAccount');
  });

  it('stops reading a body over the size cap, also an endless one', async () => {
    const { client } = await setup(
      (_req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        const chunk = Buffer.alloc(64 * 1024, 0x20);
        const pump = () => {
          while (res.write(chunk)) {
            /* keep writing until back-pressure */
          }
        };
        res.on('drain', pump);
        res.on('error', () => {});
        pump();
      },
      { maxResponseBytes: 1024 * 1024 },
    );
    await expect(client.listModels()).rejects.toThrow(/exceeds 1048576 bytes/);
  });

  it('does not follow redirects (the key never reaches another origin)', async () => {
    const other = await startLocalServer((_req, res) => json(res, 200, ACCOUNT));
    cleanups.push(() => other.stop());
    const { client } = await setup((_req, res) => {
      res.writeHead(307, { location: `${other.baseUrl}/account` });
      res.end();
    });
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 307, exitCode: 2 });
    expect(other.requests).toHaveLength(0);
  });
});

describe('rate limits', () => {
  it('never sends before Retry-After elapsed, and pauses every caller', async () => {
    let n = 0;
    const { server, client, events } = await setup((_req, res) => {
      if (n++ === 0)
        json(
          res,
          429,
          { error: { code: 'rate_limited', message: 'slow down' } },
          { 'retry-after': '1' },
        );
      else json(res, 200, ACCOUNT);
    });
    const first = client.getAccount();
    // A second caller starts once the 429 is known: it must wait for the pause too.
    await new Promise<void>((resolve) => {
      const check = () => (events.length > 0 ? resolve() : setImmediate(check));
      check();
    });
    const second = client.listInfluencers().catch(() => undefined);
    await first;
    await second;
    const [limited, ...rest] = server.requests;
    expect(events[0]).toMatchObject({ reason: 'rate-limited', delayMs: 1000, status: 429 });
    for (const later of rest) expect(later.at - limited!.at).toBeGreaterThanOrEqual(1000);
    expect(rest).toHaveLength(2);
  });

  it('an AbortSignal cancels a Retry-After wait', async () => {
    const controller = new AbortController();
    // The retry event is sent just before the wait starts, in the same turn:
    // a stop queued from it lands inside the wait, not in the request.
    const stopInWait = (e: ClientEvent) => {
      if (e.reason === 'rate-limited')
        queueMicrotask(() => controller.abort(new Error('stop now')));
    };
    const { server, client } = await setup(
      (_req, res) =>
        json(
          res,
          429,
          { error: { code: 'rate_limited', message: 'wait' } },
          { 'retry-after': '3600' },
        ),
      { onEvent: stopInWait },
    );
    await expect(client.getAccount({ signal: controller.signal })).rejects.toThrow('stop now');
    expect(server.requests).toHaveLength(1);
  });
});

describe('security', () => {
  it.each([
    'http://example.com/api/v1',
    'ftp://127.0.0.1/api/v1',
    'not a url',
    'http://user:pw@localhost/api/v1',
  ])('refuses the base URL %s with exit 2', (baseUrl) => {
    expect(() => createClient({ baseUrl, apiKey: KEY })).toThrow(UsageError);
  });

  it.each([
    'https://api.example.com/api/v1',
    'http://localhost:9/api/v1',
    'http://127.1.2.3/api/v1',
    'http://[::1]:9/api/v1',
  ])('accepts %s', async (baseUrl) => {
    let client: ReturnType<typeof createClient> | undefined;
    expect(() => {
      client = createClient({ baseUrl, apiKey: KEY });
    }).not.toThrow();
    await client?.close();
  });

  it('keeps the key out of logs and error messages, even when the service echoes it', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        lines.push(chunk.toString());
        done();
      },
    });
    const logger = createLogger({ level: 'debug', format: 'json', destination: sink });
    const { client } = await setup(
      (_req, res) => json(res, 401, { error: { code: 'unauthorized', message: `bad key ${KEY}` } }),
      { logger },
    );
    const error = await client.getAccount().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, exitCode: 5 });
    const message = (error as Error).message;
    expect(message).toMatch(/set IBATCH_API_KEY/);
    expect(message).not.toContain(KEY);
    expect(JSON.stringify(error)).not.toContain(KEY);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.join('')).not.toContain(KEY);
  });

  it('uploads with exactly the presigned headers and no Authorization', async () => {
    const { server, client } = await setup((_req, res) => {
      res.writeHead(200);
      res.end();
    });
    const presign = {
      uploadUrl: `${server.origin}/upload/abc?sig=1`,
      assetUrl: `${server.origin}/assets/abc.png`,
      expiresInSeconds: 120,
      method: 'PUT',
      headers: { 'Content-Type': 'image/png', 'x-amz-meta': 'm' },
      browserUploadUrl: `${server.origin}/browser`,
    };
    const result = await client.upload(presign, Buffer.from('pngbytes'));
    expect(result).toMatchObject({ assetUrl: presign.assetUrl, sizeBytes: 8 });
    const put = server.requests[0]!;
    expect(put).toMatchObject({ method: 'PUT', url: '/upload/abc?sig=1', body: 'pngbytes' });
    expect(put.headers.authorization).toBeUndefined();
    expect(put.headers['content-type']).toBe('image/png');
    expect(put.headers['x-amz-meta']).toBe('m');
  });
});
