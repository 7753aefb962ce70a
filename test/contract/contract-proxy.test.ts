/**
 * The contract proxy against a small scripted target: the target answers
 * deliberately broken responses the emulator never would, to prove the proxy
 * records them and still passes every byte through unchanged.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ContractProxy, startContractProxy } from '../helpers/contract-proxy.js';

interface Scripted {
  status: number;
  headers: Record<string, string>;
  body: string;
}

const account = { plan: 'pro', subscribed: true, credits: 5, purchaseUrl: 'https://x.example/buy' };
const okHeaders = {
  'content-type': 'application/json',
  'x-ratelimit-limit': '120',
  'x-ratelimit-remaining': '7',
};

let target: Server;
let proxy: ContractProxy;
let next: Scripted;
let received: Array<{
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}>;

beforeEach(async () => {
  received = [];
  target = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
    });
    res.writeHead(next.status, next.headers);
    res.end(next.body);
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const { port } = target.address() as AddressInfo;
  proxy = await startContractProxy(`http://127.0.0.1:${port}/api/v1`);
});

afterEach(async () => {
  await proxy.stop();
  target.closeAllConnections();
  await new Promise<void>((resolve) => target.close(() => resolve()));
});

describe('startContractProxy', () => {
  it('forwards a conforming exchange unchanged and records nothing', async () => {
    next = { status: 200, headers: okHeaders, body: JSON.stringify(account) };
    expect(proxy.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/);

    const response = await fetch(`${proxy.baseUrl}/account`, {
      headers: { authorization: 'Bearer ifk_live_abc' },
    });

    expect(response.status).toBe(200);
    expect(response.headers.get('x-ratelimit-remaining')).toBe('7');
    expect(await response.json()).toEqual(account);
    expect(received).toHaveLength(1);
    expect(received[0]?.url).toBe('/api/v1/account');
    expect(received[0]?.headers.authorization).toBe('Bearer ifk_live_abc');
    expect(proxy.violations).toEqual([]);
    expect(proxy.requests).toBe(1);
  });

  it('forwards the request body and headers, and records a bad request', async () => {
    next = {
      status: 400,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ error: { code: 'validation_error', message: 'copies' } }),
    };
    const body = JSON.stringify({ input: { prompt: 'x' }, copies: 9 });

    const response = await fetch(`${proxy.baseUrl}/models/img-1/generations?x=1`, {
      method: 'POST',
      headers: {
        authorization: 'Bearer ifk_live_abc',
        'content-type': 'application/json',
        'idempotency-key': 'k-1',
      },
      body,
    });

    expect(response.status).toBe(400);
    expect(received[0]?.body).toBe(body);
    expect(received[0]?.headers['idempotency-key']).toBe('k-1');
    expect(proxy.violations).toEqual([
      {
        kind: 'request',
        method: 'POST',
        path: '/models/img-1/generations?x=1',
        messages: [
          '/requestBody/copies must be <= 4',
          '/query must NOT have additional properties (`x`)',
        ],
      },
    ]);
  });

  it('passes a 429 through with Retry-After and records a broken response', async () => {
    next = {
      status: 429,
      headers: { 'content-type': 'application/json', 'retry-after': '3' },
      body: '{}',
    };

    const response = await fetch(`${proxy.baseUrl}/models`, {
      headers: { authorization: 'Bearer ifk_live_abc' },
    });

    expect(response.status).toBe(429);
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.text()).toBe('{}');
    expect(proxy.violations).toEqual([
      {
        kind: 'response',
        method: 'GET',
        path: '/models',
        status: 429,
        messages: ["/ must have required property 'error'"],
      },
    ]);
  });

  it('records a success without rate-limit headers', async () => {
    next = {
      status: 200,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(account),
    };

    await fetch(`${proxy.baseUrl}/account`, { headers: { authorization: 'Bearer ifk_live_abc' } });

    expect(proxy.violations.flatMap((v) => v.messages)).toEqual([
      'missing response header X-RateLimit-Limit',
      'missing response header X-RateLimit-Remaining',
    ]);
  });
});
