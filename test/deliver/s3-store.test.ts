/**
 * The object store module against real servers: a large file goes up in
 * parts (lib-storage) to s3rver and arrives whole, as one object with its
 * sha256; a HEAD answered 403 (AWS's answer for a missing key without
 * s3:ListBucket) is "unknown", not a refusal; 408 and 429 are "try later"
 * (unreachable), a 403 on PUT a refusal; both exit 4 with the stop reason
 * `delivery`.
 */
import { randomBytes } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DeliveryRefusedError,
  DeliveryUnreachableError,
  openS3Store,
} from '../../src/deliver/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { hashFile } from '../../src/uploads/index.js';
import { answering, withTestCredentials } from '../helpers/answering-store.js';
import { defer, tempDir } from '../helpers/index.js';
import { startTestS3 } from '../helpers/s3-server.js';

const MIB = 1024 * 1024;

withTestCredentials();

const memory = (key: string) => {
  const text = '{"a":1}\n';
  const body = Buffer.from(text);
  return {
    bucket: 'media',
    key,
    source: { body },
    bytes: body.length,
    contentType: 'application/json',
    sha256: sha256Hex(text),
  };
};

describe('openS3Store', () => {
  it('a file above the multipart threshold arrives whole, as one object with its sha256', async () => {
    const s3 = await startTestS3();
    const store = await openS3Store({ env: s3.env, multipartThreshold: MIB });
    defer(() => store.close());
    // Above one 8 MiB part: two parts, then the completion.
    const bytes = randomBytes(9 * MIB);
    const file = path.join(tempDir('multipart'), 'big.mp4');
    writeFileSync(file, bytes);
    const sha256 = await hashFile(file);
    const signal = new AbortController().signal;
    await store.put(
      {
        bucket: s3.bucket,
        key: 'big/clip.mp4',
        source: { path: file },
        bytes: bytes.length,
        contentType: 'video/mp4',
        sha256,
      },
      signal,
    );
    const parts = s3.requests().filter((r) => r.method === 'PUT' && r.url.includes('partNumber='));
    expect(parts).toHaveLength(2);
    expect(s3.completedPuts()).toEqual(['big/clip.mp4']);
    const stored = await s3.get('big/clip.mp4');
    expect(stored.body.equals(bytes)).toBe(true);
    expect(stored.contentType).toBe('video/mp4');
    expect(stored.metadata.sha256).toBe(sha256);
    expect(await store.head(s3.bucket, 'big/clip.mp4')).toBe(sha256);
    // The upload's abort listener went with it (one per large file otherwise).
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  }, 60_000);

  it('a HEAD answered 403 is unknown: the PUT decides', async () => {
    const { store, seen } = await answering({ head: 403 });
    expect(await store.head('media', 'new.json')).toBeUndefined();
    await store.put(memory('new.json'));
    expect(seen).toEqual(['HEAD', 'PUT']);
  });

  it.each([408, 429, 503])(
    'a PUT answered %i is unreachable (try later)',
    async (status) => {
      const { store } = await answering({ put: status });
      const error = await store.put(memory('x.json')).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DeliveryUnreachableError);
      expect(error).toMatchObject({
        code: 'delivery_unreachable',
        exitCode: 4,
        stopReason: 'delivery',
        retryable: true,
      });
    },
    30_000,
  );

  it('a PUT answered 403 is refused: exit 4, stop reason delivery, not a refused API key', async () => {
    const { store } = await answering({ put: 403 });
    const error = await store.put(memory('x.json')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryRefusedError);
    expect(error).toMatchObject({
      code: 'delivery_refused',
      exitCode: 4,
      stopReason: 'delivery',
      retryable: false,
    });
    expect(String((error as Error).message)).toContain('refused the delivery');
  });
});
