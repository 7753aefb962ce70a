import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createDownloadQueue,
  DownloadError,
  diskFullCode,
  downloadOutput,
  isAlreadyDownloaded,
  OutputDiskFullError,
} from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { tempDir } from '../helpers/index.js';
import { makePng, SAMPLES } from '../uploads/fixtures/media-samples.js';

const servers: Server[] = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

async function serve(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const PNG = makePng(16, 16, [0, 128, 255]);
const sha = (b: Buffer) => sha256Hex(b);

async function failure(promise: Promise<unknown>): Promise<DownloadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(DownloadError);
  return error as DownloadError;
}

/** Nothing but the final files: no `.part-` leftovers. */
const listing = (dir: string) => readdirSync(dir, { recursive: true }).map(String).sort();

describe('downloadOutput', () => {
  it('streams to the destination, records sha256 and prefers the sniffed type', async () => {
    const base = await serve((_req, res) => {
      res.setHeader('content-type', 'image/jpeg'); // wrong: the bytes are a PNG
      res.end(PNG);
    });
    const dir = tempDir('download');
    const result = await downloadOutput({
      url: `${base}/out/1`,
      dest: (type) => path.join(dir, 'step', `item-1.${type.ext}`),
      maxBytes: 1_000_000,
    });
    expect(result).toMatchObject({
      bytes: PNG.length,
      sha256: sha(PNG),
      contentType: 'image/png',
      ext: 'png',
    });
    expect(result.path).toBe(path.join(dir, 'step', 'item-1.png'));
    expect(readFileSync(result.path).equals(PNG)).toBe(true);
    expect(listing(dir)).toEqual(['step', path.join('step', 'item-1.png')]);
    await expect(isAlreadyDownloaded(result.path, result.sha256)).resolves.toBe(true);
  });

  it('refuses bytes that are no media of the declared kind, whatever the Content-Type says', async () => {
    const bodies: Record<string, [string, Buffer]> = {
      '/zeros-mp4': ['video/mp4', Buffer.alloc(100)],
      '/zeros-bin': ['application/octet-stream', Buffer.alloc(100)],
      '/html-png': ['image/png', SAMPLES.html],
      '/mp4-png': ['image/png', SAMPLES.mp4],
      '/short-png': ['image/png', Buffer.from('<')],
    };
    const base = await serve((req, res) => {
      const [type, body] = bodies[req.url ?? ''] ?? ['text/plain', Buffer.alloc(0)];
      res.setHeader('content-type', type);
      res.end(body);
    });
    const dir = tempDir('download');
    const messages: string[] = [];
    for (const route of Object.keys(bodies)) {
      const error = await failure(
        downloadOutput({ url: `${base}${route}`, dest: path.join(dir, 'x.png'), maxBytes: 1e6 }),
      );
      expect(error, route).toMatchObject({ reason: 'content_type', retryable: false });
      messages.push(error.message);
    }
    expect(messages[2]).toMatch(
      /declared image\/png, but its bytes are no image.*"<!doctype html><"/,
    );
    expect(messages[3]).toMatch(/declared image\/png, but its bytes are video\/mp4/);
    expect(listing(dir)).toEqual([]);
  });

  it('refuses every scheme but http(s) and a URL that is none, for good', async () => {
    const dir = tempDir('download');
    for (const url of [
      'data:image/png;base64,iVBORw0KGgo=',
      'ftp://127.0.0.1/out.png',
      'file:///etc/passwd',
      'javascript:alert(1)',
      'not a url',
    ]) {
      const error = await failure(
        downloadOutput({ url, dest: path.join(dir, 'x.png'), maxBytes: 1e6 }),
      );
      expect(error, url).toMatchObject({ reason: 'scheme', retryable: false });
      expect(error.message).toMatch(/^refused to download /);
    }
    expect(listing(dir)).toEqual([]);
  });

  it('maps ENOSPC/EDQUOT to OutputDiskFullError, anything else to no disk error', () => {
    // A real ENOSPC: /dev/full refuses every write with it (Linux).
    let enospc: unknown;
    try {
      writeFileSync('/dev/full', 'x');
    } catch (error) {
      enospc = error;
    }
    expect(diskFullCode(enospc)).toBe('ENOSPC');
    expect(diskFullCode(Object.assign(new Error('quota'), { code: 'EDQUOT' }))).toBe('EDQUOT');
    expect(diskFullCode(Object.assign(new Error('x'), { code: 'EACCES' }))).toBeUndefined();
    expect(diskFullCode(undefined)).toBeUndefined();
    const full = new OutputDiskFullError('/data/out', 'ENOSPC', { cause: enospc });
    expect(full).toMatchObject({ code: 'disk_full', exitCode: 4, stopReason: 'unreachable' });
    expect(full.message).toBe('the disk holding /data/out is full (ENOSPC)');
  });

  it('fails on 404 (not retryable) and 503 (retryable) without writing anything', async () => {
    const base = await serve((req, res) => {
      res.statusCode = req.url === '/gone' ? 404 : 503;
      res.end('nope');
    });
    const dir = tempDir('download');
    const gone = await failure(
      downloadOutput({ url: `${base}/gone`, dest: path.join(dir, 'a.png'), maxBytes: 10 }),
    );
    expect(gone).toMatchObject({ reason: 'http', status: 404, retryable: false });
    const busy = await failure(
      downloadOutput({ url: `${base}/busy`, dest: path.join(dir, 'a.png'), maxBytes: 10 }),
    );
    expect(busy).toMatchObject({ reason: 'http', status: 503, retryable: true });
    expect(listing(dir)).toEqual([]);
  });

  it('refuses a wrong content type (HTML error page) and a disallowed category', async () => {
    const base = await serve((req, res) => {
      res.setHeader('content-type', req.url === '/html' ? 'text/html' : 'video/mp4');
      res.end(req.url === '/html' ? SAMPLES.html : SAMPLES.mp4);
    });
    const dir = tempDir('download');
    const html = await failure(
      downloadOutput({ url: `${base}/html`, dest: path.join(dir, 'x'), maxBytes: 1e6 }),
    );
    expect(html.reason).toBe('content_type');
    const video = await failure(
      downloadOutput({
        url: `${base}/mp4`,
        dest: path.join(dir, 'x'),
        maxBytes: 1e6,
        allowedTypes: ['image'],
      }),
    );
    expect(video.reason).toBe('content_type');
    expect(listing(dir)).toEqual([]);
  });

  it('refuses a body declared too big, and aborts an endless body at the cap', async () => {
    let endlessClosed: Promise<void> = Promise.resolve();
    const base = await serve((req, res) => {
      res.setHeader('content-type', 'image/png');
      if (req.url === '/declared') {
        res.setHeader('content-length', '5000');
        res.end(Buffer.concat([PNG, Buffer.alloc(5000 - PNG.length)]));
        return;
      }
      endlessClosed = new Promise((resolve) => res.on('close', () => resolve()));
      const pump = () => {
        while (!res.destroyed && res.write(Buffer.concat([PNG, Buffer.alloc(4096)]))) {}
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    const dir = tempDir('download');
    const declared = await failure(
      downloadOutput({ url: `${base}/declared`, dest: path.join(dir, 'a.png'), maxBytes: 4000 }),
    );
    expect(declared.reason).toBe('too_large');
    const endless = await failure(
      downloadOutput({
        url: `${base}/endless`,
        dest: path.join(dir, 'b.png'),
        maxBytes: 256 * 1024,
      }),
    );
    expect(endless).toMatchObject({ reason: 'too_large', retryable: false });
    await endlessClosed; // the connection was really torn down
    expect(listing(dir)).toEqual([]);
  });

  it('times out a trickling body and removes the partial file', async () => {
    const base = await serve((_req, res) => {
      res.setHeader('content-type', 'image/png');
      res.write(PNG.subarray(0, 64)); // enough to start the temp file
      const timer = setInterval(() => res.write(Buffer.alloc(1)), 20);
      res.on('close', () => clearInterval(timer));
    });
    const dir = tempDir('download');
    const error = await failure(
      downloadOutput({
        url: `${base}/slow`,
        dest: path.join(dir, 'slow.png'),
        maxBytes: 1e6,
        timeoutMs: 300,
      }),
    );
    expect(error).toMatchObject({ reason: 'timeout', retryable: true });
    expect(listing(dir)).toEqual([]);
  });

  it('follows a same-origin redirect and refuses one to another origin', async () => {
    const other = await serve((_req, res) => {
      res.setHeader('content-type', 'image/png');
      res.end(PNG);
    });
    const base = await serve((req, res) => {
      if (req.url === '/final') {
        res.setHeader('content-type', 'image/png');
        res.end(PNG);
        return;
      }
      res.statusCode = 302;
      res.setHeader('location', req.url === '/same' ? '/final' : `${other}/final`);
      res.end();
    });
    const dir = tempDir('download');
    const same = await downloadOutput({
      url: `${base}/same`,
      dest: path.join(dir, 'same.png'),
      maxBytes: 1e6,
    });
    expect(same.sha256).toBe(sha(PNG));
    const error = await failure(
      downloadOutput({ url: `${base}/away`, dest: path.join(dir, 'away.png'), maxBytes: 1e6 }),
    );
    expect(error).toMatchObject({ reason: 'redirect', retryable: false });
    expect(listing(dir)).toEqual(['same.png']);
  });

  it('reports an abort by the caller as aborted', async () => {
    const base = await serve(() => {
      // never answers
    });
    const controller = new AbortController();
    const dir = tempDir('download');
    const pending = downloadOutput({
      url: `${base}/hang`,
      dest: path.join(dir, 'a.png'),
      maxBytes: 10,
      signal: controller.signal,
    });
    controller.abort();
    expect((await failure(pending)).reason).toBe('aborted');
  });
});

describe('isAlreadyDownloaded and createDownloadQueue', () => {
  it('answers false for a missing, edited or hash-less file', async () => {
    const dir = tempDir('download');
    const file = path.join(dir, 'a.png');
    await expect(isAlreadyDownloaded(file, sha(PNG))).resolves.toBe(false);
    writeFileSync(file, PNG);
    await expect(isAlreadyDownloaded(file, sha(PNG))).resolves.toBe(true);
    await expect(isAlreadyDownloaded(file, undefined)).resolves.toBe(false);
    writeFileSync(file, Buffer.concat([PNG, Buffer.from([1])]));
    await expect(isAlreadyDownloaded(file, sha(PNG))).resolves.toBe(false);
  });

  it('bounds concurrency', async () => {
    const queue = createDownloadQueue(2);
    let running = 0;
    let peak = 0;
    const task = async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((resolve) => setImmediate(resolve));
      running -= 1;
    };
    await Promise.all(Array.from({ length: 6 }, () => queue.add(task)));
    expect(peak).toBe(2);
    expect(() => createDownloadQueue(0)).toThrow(/concurrency/);
  });
});
