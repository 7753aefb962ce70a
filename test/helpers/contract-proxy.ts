/**
 * A loopback HTTP proxy that checks every exchange against openapi/service.yaml.
 *
 * Point a client at `proxy.baseUrl` instead of the emulator's base URL: each
 * request is forwarded unchanged, its response returned unchanged (status,
 * headers such as Retry-After and X-RateLimit-*, body), and both are validated
 * by the independent OpenAPI validator. Violations are recorded, never
 * enforced, so the client sees exactly what the target answered.
 */
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent, request } from 'undici';
import { validateRequest, validateResponse } from './openapi.js';

export interface ContractViolation {
  kind: 'request' | 'response';
  method: string;
  /** Path relative to the base URL, with its query string. */
  path: string;
  status?: number;
  messages: string[];
}

export interface ContractProxy {
  /** Same path prefix as the target base URL, on the proxy's origin. */
  readonly baseUrl: string;
  readonly violations: ContractViolation[];
  /** Requests forwarded so far. */
  readonly requests: number;
  stop(): Promise<void>;
}

// Connection-level headers describe one hop, not the message.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'host',
  'content-length',
]);

function forwardableHeaders(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined && !HOP_BY_HOP.has(name.toLowerCase())) out[name] = value;
  }
  return out;
}

async function readBody(message: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of message) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Text of a body for validation: undefined when empty. */
function bodyText(body: Buffer): string | undefined {
  return body.length === 0 ? undefined : body.toString('utf8');
}

export async function startContractProxy(targetBaseUrl: string): Promise<ContractProxy> {
  const target = new URL(targetBaseUrl);
  const basePath = target.pathname.replace(/\/$/, '');
  const agent = new Agent({ keepAliveTimeout: 1_000 });
  const violations: ContractViolation[] = [];
  let requests = 0;

  async function handle(incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> {
    requests += 1;
    const method = incoming.method ?? 'GET';
    const url = incoming.url ?? '/';
    const relative = url.startsWith(basePath) ? url.slice(basePath.length) || '/' : url;
    const requestBody = await readBody(incoming);

    const requestMessages = validateRequest({
      method,
      path: relative,
      headers: incoming.headers,
      body: bodyText(requestBody),
    });
    if (requestMessages.length > 0) {
      violations.push({ kind: 'request', method, path: relative, messages: requestMessages });
    }

    const upstream = await request(new URL(url, target.origin), {
      method: method as 'GET',
      headers: forwardableHeaders(incoming.headers),
      body: requestBody.length > 0 ? requestBody : null,
      dispatcher: agent,
    });
    const responseBody = Buffer.from(await upstream.body.arrayBuffer());
    const responseHeaders = forwardableHeaders(upstream.headers as IncomingHttpHeaders);

    const responseMessages = validateResponse({
      method,
      path: relative,
      status: upstream.statusCode,
      headers: responseHeaders,
      body: bodyText(responseBody),
    });
    if (responseMessages.length > 0) {
      violations.push({
        kind: 'response',
        method,
        path: relative,
        status: upstream.statusCode,
        messages: responseMessages,
      });
    }

    outgoing.writeHead(upstream.statusCode, {
      ...responseHeaders,
      'content-length': String(responseBody.length),
    });
    outgoing.end(responseBody);
  }

  const server = createServer((incoming, outgoing) => {
    handle(incoming, outgoing).catch((error: unknown) => {
      // A transport failure reaching the target: answer like a broken gateway
      // so the client sees a 5xx, and record it so the test cannot miss it.
      const message = error instanceof Error ? error.message : String(error);
      violations.push({
        kind: 'response',
        method: incoming.method ?? 'GET',
        path: incoming.url ?? '/',
        status: 502,
        messages: [`proxy could not reach the target: ${message}`],
      });
      if (!outgoing.headersSent) outgoing.writeHead(502, { 'content-type': 'application/json' });
      outgoing.end(JSON.stringify({ error: { code: 'internal_error', message: 'proxy error' } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}${basePath}`,
    violations,
    get requests() {
      return requests;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await agent.close();
    },
  };
}
