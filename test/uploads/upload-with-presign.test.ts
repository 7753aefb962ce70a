import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import type { AssetUpload, AssetUploadRequest } from '../../src/contract/index.js';
import {
  type PreparedUpload,
  PresignExpiredError,
  type PutFn,
  prepareUpload,
  uploadWithPresign,
} from '../../src/uploads/index.js';
import { tempDir } from '../helpers/index.js';
import { SAMPLES } from './fixtures/media-samples.js';

const FILE: PreparedUpload = {
  path: '/refs/a.png',
  sizeBytes: 1234,
  sha256: 'a'.repeat(64),
  mime: 'image/png',
  ext: 'png',
  category: 'image',
};

function presigner(base = 'http://storage.test') {
  const requests: AssetUploadRequest[] = [];
  const fn = async (req: AssetUploadRequest): Promise<AssetUpload> => {
    requests.push(req);
    const n = requests.length;
    return {
      uploadUrl: `${base}/put/${n}`,
      assetUrl: `https://assets.test/${n}.png`,
      expiresInSeconds: 120,
      method: 'PUT',
      headers: { 'Content-Type': req.mimeType },
      browserUploadUrl: 'https://assets.test/browser',
    };
  };
  return { fn, requests };
}

describe('uploadWithPresign (function fakes)', () => {
  it('presigns with the sniffed type and size, PUTs once, returns the asset URL', async () => {
    const { fn, requests } = presigner();
    const puts: string[] = [];
    const put: PutFn = async (presign, _file, ctx) => {
      puts.push(presign.uploadUrl);
      expect(ctx.expiresAt).toBe(1_000 + 120_000 - 10_000);
    };
    const url = await uploadWithPresign(FILE, fn, put, { now: () => 1_000 });
    expect(url).toBe('https://assets.test/1.png');
    expect(requests).toEqual([{ mimeType: 'image/png', sizeBytes: 1234 }]);
    expect(puts).toEqual(['http://storage.test/put/1']);
  });

  it('presigns again when the URL expired while waiting to PUT', async () => {
    const { fn, requests } = presigner();
    let clock = 0;
    const put: PutFn = async (_p, _f, ctx) => {
      if (ctx.attempt === 1) {
        clock += 200_000; // waited on the uploads bucket longer than the lifetime
        if (clock >= ctx.expiresAt) throw new PresignExpiredError();
      }
    };
    await expect(uploadWithPresign(FILE, fn, put, { now: () => clock })).resolves.toBe(
      'https://assets.test/2.png',
    );
    expect(requests).toHaveLength(2);
  });

  it('presigns again when the storage answers an expiry error, and passes other errors through', async () => {
    const { fn, requests } = presigner();
    let calls = 0;
    const expiring: PutFn = async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('Request has expired'), { status: 403 });
    };
    await expect(uploadWithPresign(FILE, fn, expiring)).resolves.toBe('https://assets.test/2.png');
    expect(requests).toHaveLength(2);
    const broken: PutFn = async () => {
      throw Object.assign(new Error('server exploded'), { status: 500 });
    };
    await expect(uploadWithPresign(FILE, fn, broken)).rejects.toThrow('server exploded');
  });

  it('skips a presign that arrived already expired, and gives up after maxPresigns', async () => {
    const { fn, requests } = presigner();
    let clock = 0;
    const slowPresign = async (req: AssetUploadRequest) => {
      const answer = await fn(req);
      clock += 115_000; // the presign call itself took nearly the whole lifetime
      return answer;
    };
    const put: PutFn = async () => {
      throw new Error('must not PUT with an expired URL');
    };
    const error = await uploadWithPresign(FILE, slowPresign, put, {
      now: () => clock,
      maxPresigns: 2,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PresignExpiredError);
    expect((error as PresignExpiredError).exitCode).toBe(4);
    expect(requests).toHaveLength(2);
  });
});

describe('uploadWithPresign (real HTTP PUT)', () => {
  it('sends the bytes with the returned headers and no Authorization', async () => {
    const dir = tempDir('presign');
    const file = path.join(dir, 'ref.png');
    writeFileSync(file, SAMPLES.png);
    const prepared = await prepareUpload(file);
    const received: { method?: string; headers?: IncomingHttpHeaders; body?: Buffer }[] = [];
    let first = true;
    const server = createServer((req, res) => {
      const parts: Buffer[] = [];
      req.on('data', (c: Buffer) => parts.push(c));
      req.on('end', () => {
        received.push({ method: req.method, headers: req.headers, body: Buffer.concat(parts) });
        // The first URL answers like an expired S3 presign.
        res.statusCode = first ? 403 : 200;
        res.end(
          first
            ? '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>'
            : '',
        );
        first = false;
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const { fn } = presigner(`http://127.0.0.1:${port}`);
      const put: PutFn = async (presign, source) => {
        const response = await request(presign.uploadUrl, {
          method: 'PUT',
          headers: presign.headers,
          body: readFileSync(source.path),
        });
        const text = await response.body.text();
        if (response.statusCode >= 300) {
          throw Object.assign(new Error(text), { status: response.statusCode });
        }
      };
      const assetUrl = await uploadWithPresign(prepared, fn, put);
      expect(assetUrl).toBe('https://assets.test/2.png');
      expect(received).toHaveLength(2);
      const last = received[1];
      expect(last?.method).toBe('PUT');
      expect(last?.headers?.['content-type']).toBe('image/png');
      expect(last?.headers?.authorization).toBeUndefined();
      expect(last?.body?.equals(SAMPLES.png)).toBe(true);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
