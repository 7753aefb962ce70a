/**
 * A real S3-compatible server for delivery tests: s3rver's app (files in a
 * temp folder) behind our own loopback `http.Server`, which keeps a
 * server-side log of every request (method, path, status once answered) and
 * can hold PUTs until the test releases them, so a test acts while a
 * delivery is provably in progress (no timing guesses). Closed after its test.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DeleteObjectCommand, GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { defer } from './cleanup.js';
import { tempDir } from './temp.js';

export interface S3Request {
  readonly method: string;
  /** Path and query, e.g. `/media/spring/shots/s1.png`. */
  readonly url: string;
  /** The status answered; undefined while in flight, held, or dropped. */
  status?: number;
}

export interface StoredObject {
  readonly body: Buffer;
  readonly contentType: string | undefined;
  readonly metadata: Record<string, string>;
}

export interface TestS3 {
  readonly endpoint: string;
  readonly bucket: string;
  /** Env for an ibatch process delivering to this server (endpoint and s3rver's credentials). */
  readonly env: Readonly<Record<string, string>>;
  /** Every request so far, in arrival order. */
  requests(): readonly S3Request[];
  /**
   * Object keys the server stored (200), one entry per object: a plain PUT,
   * or a multipart upload's completion (its parts are not objects).
   */
  completedPuts(): string[];
  /** From now on each PUT waits (logged, unanswered) until `release`. */
  hold(): void;
  /** Lets `n` held PUTs through, oldest first (those whose client is gone are dropped). */
  release(n?: number): number;
  /** Stops holding and lets every waiting PUT through. */
  releaseAll(): void;
  /** PUTs waiting now. */
  held(): number;
  get(key: string): Promise<StoredObject>;
  /** Removes an object, as someone tidying the bucket would. */
  remove(key: string): Promise<void>;
}

interface Held {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

export async function startTestS3(bucket = 'media'): Promise<TestS3> {
  const s3rver = new S3rver({
    silent: true,
    directory: tempDir('s3'),
    configureBuckets: [{ name: bucket }],
  });
  await s3rver.configureBuckets();
  const app = s3rver.callback();
  const log: S3Request[] = [];
  let holding = false;
  const waiting: Held[] = [];
  const server = createServer((req, res) => {
    const entry: S3Request = { method: req.method ?? '', url: req.url ?? '' };
    log.push(entry);
    res.on('finish', () => {
      entry.status = res.statusCode;
    });
    if (holding && req.method === 'PUT') waiting.push({ req, res });
    else app(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The SDK's own switch for its Node < 22 warning (this process reads objects back too).
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  defer(async () => {
    client.destroy();
    for (const { res } of waiting.splice(0)) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const release = (n = 1) => {
    let released = 0;
    while (released < n && waiting.length > 0) {
      const next = waiting.shift() as Held;
      if (gone(next)) continue;
      app(next.req, next.res);
      released += 1;
    }
    return released;
  };
  const prefix = `/${bucket}/`;
  return {
    endpoint,
    bucket,
    env: {
      AWS_ENDPOINT_URL_S3: endpoint,
      AWS_ACCESS_KEY_ID: 'S3RVER',
      AWS_SECRET_ACCESS_KEY: 'S3RVER',
    },
    requests: () => log,
    completedPuts: () =>
      log
        .filter((r) => r.status === 200 && storesObject(r))
        .map((r) => decodeURIComponent(r.url.split('?')[0] ?? '').slice(prefix.length)),
    hold: () => {
      holding = true;
    },
    release,
    releaseAll: () => {
      holding = false;
      release(Number.POSITIVE_INFINITY);
    },
    held: () => waiting.filter((h) => !gone(h)).length,
    async get(key) {
      const object = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return {
        body: Buffer.from(await (object.Body?.transformToByteArray() ?? new Uint8Array())),
        contentType: object.ContentType,
        metadata: object.Metadata ?? {},
      };
    },
    async remove(key) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key }));
    },
  };
}

/** A plain PUT, or the POST that completes a multipart upload (not a part's PUT, not its start). */
const storesObject = (r: S3Request) =>
  r.url.includes('uploadId=') ? r.method === 'POST' : r.method === 'PUT';

/** The client of a held request went away (killed): it must never reach the store. */
const gone = (held: Held) => held.req.socket.destroyed || held.res.destroyed;
