/**
 * The `ibatch review` web server (node:http, no framework). Routes, all of
 * them behind a `Host` naming this listener and the session token
 * (security.ts):
 *
 *   GET  /                  the page
 *   GET  /api/outputs       a page of outputs: `offset`, `limit`, filters `step`, `status`, `review`, `q`
 *   GET  /files/<file>      an output file of the listing, from the output folder only
 *   POST /api/decisions     `{targets: [{runId, item, n}] | filter: {...}, decision, note?, prompt?}`
 *
 * GET never changes anything. The server makes no service call and never
 * holds the API key: nothing it answers can contain it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Journal } from '../../journal/index.js';
import type { DescribedItems } from '../../outputs/index.js';
import { decide } from './decisions.js';
import { serveFile } from './files.js';
import {
  buildListing,
  filterOutputs,
  type ReviewListing,
  summaryOf,
  withDecisions,
} from './listing.js';
import { renderReviewPage, SCRIPT_HASH, STYLE_HASH } from './page.js';
import {
  hostRefusal,
  listenerHosts,
  postRefusal,
  requestToken,
  setSafetyHeaders,
  tokenMatches,
} from './security.js';

export interface ReviewServerOptions {
  readonly journal: Journal;
  readonly jobName: string;
  readonly reviewer: string;
  /** @default 127.0.0.1 (callers check any other host with `checkHost`) */
  readonly host?: string;
  /** @default 0: a free port */
  readonly port?: number;
  /** The per-session token every request must carry (`newToken()`). */
  readonly token: string;
  /** The items the job file describes now (which outputs are retired). */
  readonly described?: DescribedItems;
  /** The job's output folder on this machine, where another machine's run is read (readerOutputDir). */
  readonly here?: string;
}

export interface RunningReviewServer {
  /** The page's address, token included. */
  readonly url: string;
  readonly port: number;
  /** The output folder the listing was built for. */
  readonly outputDir: string;
  /** Decisions recorded through this server so far. */
  recorded(): number;
  close(): Promise<void>;
}

const MAX_PAGE = 500;
const MAX_BODY = 1 << 20;

export async function startReviewServer(
  options: ReviewServerOptions,
): Promise<RunningReviewServer> {
  const { journal, jobName, token, described, here } = options;
  // Built once up front (a job with no run fails here, before listening).
  // A first page (a reload, a new filter) and a decision read it fresh: built
  // again only when another process committed to the journal since, since
  // building it reads every run's items, attempts and outputs (seconds at
  // 100,000 outputs) and a filter must answer at once. This server's own
  // decisions only change review fields: applied in place (`withDecisions`;
  // its own commits leave changeCount alone). Later pages read the same
  // listing, so paging is stable.
  let listing = buildListing(journal, jobName, described, here);
  let builtAt = journal.changeCount();
  let recorded = 0;
  const fresh = (): ReviewListing => {
    const now = journal.changeCount();
    if (now !== builtAt) {
      listing = buildListing(journal, jobName, described, here);
      builtAt = now;
    }
    return listing;
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: (error as Error).message });
      else res.destroy();
    });
  });

  const host = options.host ?? '127.0.0.1';
  // Known once listening (the port may be picked by the system); no request comes before.
  let hosts = listenerHosts(host, options.port ?? 0);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://review.invalid');
    // Before the token: a rebinding page that somehow holds it is refused all the same.
    const wrongHost = hostRefusal(req, hosts);
    if (wrongHost) {
      req.resume();
      setSafetyHeaders(res);
      return sendJson(res, 403, { error: wrongHost });
    }
    const given = requestToken(req, url);
    if (!tokenMatches(token, given)) {
      // A refused request's body is read and dropped, so the answer reaches the client.
      req.resume();
      setSafetyHeaders(res);
      sendJson(res, given === undefined ? 401 : 403, { error: 'this page needs its token' });
      return;
    }
    if (req.method === 'POST' && url.pathname === '/api/decisions') {
      setSafetyHeaders(res);
      const refusal = postRefusal(req, token);
      if (refusal) {
        req.resume();
        return sendJson(res, 403, { error: refusal });
      }
      const body = await readJson(req);
      const result = decide(journal, fresh(), { jobName, reviewer: options.reviewer }, body);
      if ('error' in result) return sendJson(res, 400, result);
      recorded += result.recorded.length;
      listing = withDecisions(listing, result.recorded);
      const after = fresh();
      const ids = new Set(result.ids);
      return sendJson(res, 200, {
        recorded: result.ids.length,
        outputs: after.outputs.filter((o) => ids.has(o.id)),
        ...summaryOf(after),
      });
    }
    if (url.pathname === '/api/decisions' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      req.resume();
      setSafetyHeaders(res);
      res.setHeader('Allow', url.pathname === '/api/decisions' ? 'POST' : 'GET, HEAD');
      return sendJson(res, 405, { error: `${req.method} is not allowed here` });
    }
    if (url.pathname === '/') {
      setSafetyHeaders(res, SCRIPT_HASH, STYLE_HASH);
      return send(
        res,
        200,
        'text/html; charset=utf-8',
        renderReviewPage(jobName, listing.outputDir),
      );
    }
    setSafetyHeaders(res);
    if (url.pathname === '/favicon.ico') {
      res.writeHead(204);
      return void res.end();
    }
    if (url.pathname === '/api/outputs') return sendJson(res, 200, outputsPage(url));
    if (url.pathname.startsWith('/files/')) {
      const path = url.pathname.slice('/files/'.length);
      return void serveFile(res, listing, path, req.method === 'HEAD').catch(() => res.destroy());
    }
    sendJson(res, 404, { error: 'not found' });
  }

  function outputsPage(url: URL) {
    const q = url.searchParams;
    const offset = clampInt(q.get('offset'), 0, Number.MAX_SAFE_INTEGER, 0);
    const limit = clampInt(q.get('limit'), 1, MAX_PAGE, 100);
    const current = offset === 0 ? fresh() : listing;
    const matching = filterOutputs(current.outputs, {
      step: q.get('step') ?? '',
      status: q.get('status') ?? '',
      review: q.get('review') ?? '',
      q: q.get('q') ?? '',
    });
    return {
      jobName,
      total: matching.length,
      offset,
      limit,
      outputs: matching.slice(offset, offset + limit),
      ...summaryOf(current),
    };
  }

  await listen(server, host, options.port ?? 0);
  const { port } = server.address() as AddressInfo;
  hosts = listenerHosts(host, port);
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}/?token=${encodeURIComponent(token)}`,
    port,
    outputDir: listing.outputDir,
    recorded: () => recorded,
    close: () => close(server),
  };
}

function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

function clampInt(text: string | null, min: number, max: number, fallback: number): number {
  const n = Number(text);
  if (text === null || text === '' || !Number.isInteger(n)) return fallback;
  return Math.min(max, Math.max(min, n));
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

function send(res: ServerResponse, status: number, type: string, body: string): void {
  res.writeHead(status, { 'Content-Type': type, 'Content-Length': Buffer.byteLength(body) });
  res.end(body);
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(value));
}
