/**
 * A download is tried again in the run after a fault a later try may not
 * meet (src/scheduler/download-retries.ts), against a real HTTP server on
 * loopback: a connection the server closes before answering (what a
 * keep-alive socket dropped while the process was stopped looks like), a
 * 503; never after what no retry can fix (a 404); and it gives up after its
 * budget. Backoff steps of 1 ms here: the policy's own delays are
 * test/api's.
 */
import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { DownloadError } from '../../src/outputs/index.js';
import { DOWNLOAD_RETRY, downloadRetrying } from '../../src/scheduler/download-retries.js';
import { tempDir } from '../helpers/index.js';
import { makePng } from '../uploads/fixtures/media-samples.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

/** A server answering its nth request (from 1) with `answer(n, ...)`; `count()` says how many came. */
async function serve(answer: (n: number, ...args: Parameters<RequestListener>) => void) {
  let n = 0;
  const server = createServer((req, res) => answer(++n, req, res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/f/0.png`,
    count: () => n,
  };
}

const PNG = makePng(8, 8, [10, 200, 30]);
const FAST = { ...DOWNLOAD_RETRY, baseDelayMs: 1, maxDelayMs: 1 };
const never = new AbortController().signal;

function png(res: Parameters<RequestListener>[1]): void {
  res.setHeader('content-type', 'image/png');
  res.end(PNG);
}

it('a connection closed before the answer, then a 503: downloaded at the third try', async () => {
  const server = await serve((n, req, res) => {
    if (n === 1) req.socket.destroy();
    else if (n === 2) res.writeHead(503).end();
    else png(res);
  });
  const dir = tempDir();
  const result = await downloadRetrying(
    { url: server.url, dest: path.join(dir, 'a.png'), maxBytes: 1e6 },
    never,
    FAST,
  );
  expect(server.count()).toBe(3);
  expect(readFileSync(result.path)).toEqual(PNG);
});

it('a 404 is not tried again', async () => {
  const server = await serve((_n, _req, res) => res.writeHead(404).end());
  const error = await downloadRetrying(
    { url: server.url, dest: path.join(tempDir(), 'a.png'), maxBytes: 1e6 },
    never,
    FAST,
  ).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(DownloadError);
  expect(server.count()).toBe(1);
});

it('a server that keeps closing the connection: given up after the budget, the error retryable', async () => {
  const server = await serve((_n, req) => req.socket.destroy());
  const error = await downloadRetrying(
    { url: server.url, dest: path.join(tempDir(), 'a.png'), maxBytes: 1e6 },
    never,
    FAST,
  ).catch((e: unknown) => e);
  expect(error).toMatchObject({ reason: 'network', retryable: true });
  expect(server.count()).toBe(1 + DOWNLOAD_RETRY.maxRetries);
});

it('a stop during the wait ends it with the stop', async () => {
  const server = await serve((_n, req) => req.socket.destroy());
  const stop = new AbortController();
  // The policy draws its jitter just before the wait starts, in the same
  // turn: a stop queued from the draw lands inside the wait, not in the try.
  const stopInWait = () => {
    queueMicrotask(() => stop.abort(new Error('stopped by the test')));
    return 0.99;
  };
  const slow = { ...DOWNLOAD_RETRY, baseDelayMs: 60_000, maxDelayMs: 60_000, random: stopInWait };
  const error = await downloadRetrying(
    { url: server.url, dest: path.join(tempDir(), 'a.png'), maxBytes: 1e6, signal: stop.signal },
    stop.signal,
    slow,
  ).catch((e: unknown) => e);
  expect(error).toMatchObject({ message: 'stopped by the test' });
  expect(server.count()).toBe(1);
});
