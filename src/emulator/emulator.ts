/**
 * `startEmulator`: two real HTTP servers on loopback. The main one serves the
 * API under /api/v1, the admin surface under /__admin and the downloads; the
 * upload origin (its own port) takes the presigned PUTs.
 */
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { API_PREFIX, ERROR_CODES, SERVICE_RATE_LIMITS } from '../contract/index.js';
import { handleAdmin } from './admin.js';
import { EmulatorAdmin } from './admin-client.js';
import type { EmulatorContext } from './context.js';
import type { Pending } from './fault-responses.js';
import { FaultPicker } from './faults.js';
import { serveFile } from './files.js';
import { EmulatorHttpError, notFound } from './http-error.js';
import { IdempotencyStore } from './idempotency.js';
import { type EmulatorOptions, resolveOptions } from './options.js';
import { createStreams } from './prng.js';
import { RateLimiter } from './rate-limit.js';
import { handleApi } from './server.js';
import { Store } from './state.js';
import { Stats } from './stats.js';
import { handleUpload } from './uploads.js';

export interface RunningEmulator {
  /** e.g. "http://127.0.0.1:PORT/api/v1" */
  baseUrl: string;
  /** e.g. "http://127.0.0.1:PORT/__admin" */
  adminUrl: string;
  /** e.g. "http://127.0.0.1:UPLOADPORT" */
  uploadOrigin: string;
  accounts: Array<{ id: string; apiKey: string; credits: number }>;
  admin: EmulatorAdmin;
  /** Closes both servers and every socket, clears timers. */
  stop(): Promise<void>;
}

function track(server: Server, sockets: Set<Socket>): void {
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
}

async function listen(server: Server, port: number, host: string): Promise<number> {
  server.listen(port, host);
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

function originOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const resolved = resolveOptions(options, SERVICE_RATE_LIMITS);
  const random = createStreams(resolved.seed);
  const scaled = Object.fromEntries(
    Object.entries(resolved.rateLimits).map(([bucket, w]) => [
      bucket,
      { count: w.count, windowMs: w.windowMs / resolved.timeScale },
    ]),
  ) as typeof resolved.rateLimits;
  const ctx: EmulatorContext = {
    options: resolved,
    behaviour: { ...resolved.behaviour },
    store: new Store(resolved.accounts, random.ids),
    limiter: new RateLimiter(scaled, () => ctx.behaviour.rateLimitAlgorithm),
    idempotency: new IdempotencyStore(),
    stats: new Stats(),
    faults: new FaultPicker(resolved.faults, random.faults),
    random,
    mainOrigin: '',
    uploadOrigin: '',
    now: resolved.clock,
    newId: () => random.ids.uuid(),
  };
  const pending: Pending = { sockets: new Set(), timers: new Set() };
  const sockets = new Set<Socket>();

  const onError = (res: ServerResponse) => (error: unknown) => {
    if (res.headersSent) res.destroy();
    else new EmulatorHttpError(ERROR_CODES.internal, String(error)).send(res);
  };
  const main = createServer(
    { keepAliveTimeout: 30_000 },
    (req: IncomingMessage, res: ServerResponse) => {
      const url = new URL(req.url ?? '/', ctx.mainOrigin);
      const path = url.pathname;
      if (path === API_PREFIX || path.startsWith(`${API_PREFIX}/`)) {
        handleApi(ctx, req, res, url, pending).catch(onError(res));
      } else if (path.startsWith('/__admin/')) {
        handleAdmin(ctx, req, res, url).catch(onError(res));
      } else if (
        (req.method === 'GET' || req.method === 'HEAD') &&
        serveFile(ctx, path, res, req.method === 'HEAD')
      ) {
        // served
      } else {
        req.resume();
        notFound(`${req.method} ${path}`).send(res);
      }
    },
  );
  const upload = createServer((req, res) => handleUpload(ctx, req, res));
  track(main, sockets);
  track(upload, sockets);

  const mainPort = await listen(main, resolved.port, resolved.host);
  const uploadPort = await listen(upload, resolved.uploadPort, resolved.host);
  ctx.mainOrigin = originOf(resolved.host, mainPort);
  ctx.uploadOrigin = originOf(resolved.host, uploadPort);
  const adminUrl = `${ctx.mainOrigin}/__admin`;

  let stopped: Promise<void> | undefined;
  return {
    baseUrl: `${ctx.mainOrigin}${API_PREFIX}`,
    adminUrl,
    uploadOrigin: ctx.uploadOrigin,
    accounts: [...ctx.store.accounts.values()].map((a) => ({
      id: a.id,
      apiKey: a.apiKeys[0] ?? '',
      credits: a.credits,
    })),
    admin: new EmulatorAdmin(adminUrl),
    stop() {
      stopped ??= (async () => {
        for (const timer of pending.timers) clearTimeout(timer);
        pending.timers.clear();
        const closed = Promise.all([once(main, 'close'), once(upload, 'close')]);
        main.close();
        upload.close();
        for (const socket of sockets) socket.destroy();
        await closed;
      })();
      return stopped;
    },
  };
}
