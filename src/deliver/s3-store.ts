/**
 * The object store a delivery writes to, over the AWS SDK v3. Credentials
 * and region come from the SDK's default chains (environment, shared config
 * and credentials files, SSO, instance roles...); the endpoint from
 * AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL, with path-style addressing then
 * (MinIO, Ceph, R2 and the like serve buckets as paths). Every SDK failure
 * leaves here as a DeliveryUnreachableError or a DeliveryRefusedError.
 */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { S3Client } from '@aws-sdk/client-s3';
import { UsageError } from '../shared/index.js';
import { DeliveryRefusedError, DeliveryUnreachableError } from './errors.js';

/** One object to send: a local file or bytes in memory (the manifests). */
export interface StoreObject {
  readonly bucket: string;
  readonly key: string;
  readonly source: { readonly path: string } | { readonly body: Buffer };
  readonly bytes: number;
  readonly contentType: string;
  readonly sha256: string;
}

export interface ObjectStore {
  /** Names the store in the journal and in messages: the endpoint's origin, or 'aws'. */
  readonly name: string;
  /** The sha256 the stored object carries (`x-amz-meta-sha256`), or undefined when absent. */
  head(bucket: string, key: string, signal?: AbortSignal): Promise<string | undefined>;
  /**
   * The object's bytes; `missing` (404), or `forbidden` (403: no s3:GetObject,
   * or a missing key AWS will not name to credentials without s3:ListBucket).
   */
  read(bucket: string, key: string, signal?: AbortSignal): Promise<Buffer | StoreAbsence>;
  put(object: StoreObject, signal?: AbortSignal): Promise<void>;
  close(): void;
}

/** Why `read` found no object. */
export type StoreAbsence = 'missing' | 'forbidden';

/** The user metadata key of an object's sha256 (sent as `x-amz-meta-sha256`). */
export const SHA256_METADATA = 'sha256';

/** Above this size a file goes up in parts (lib-storage `Upload`), 8 MiB each. */
export const MULTIPART_THRESHOLD = 16 * 1024 * 1024;
const PART_SIZE = 8 * 1024 * 1024;

/** Custom endpoints often have no region configured; S3-compatible stores accept any. */
const FALLBACK_REGION = 'us-east-1';

export interface S3StoreOptions {
  /** Where AWS_ENDPOINT_URL_S3 / AWS_ENDPOINT_URL are read (the CLI's environment). */
  readonly env: NodeJS.ProcessEnv;
  /** @default MULTIPART_THRESHOLD */
  readonly multipartThreshold?: number;
}

export async function openS3Store(options: S3StoreOptions): Promise<ObjectStore> {
  const endpoint = s3EndpointOf(options.env);
  // The SDK warns on every process below Node 22 (NodeVersionSupportWarning on
  // stderr, from @aws-sdk/core's emitWarningIfUnsupportedVersion); this is its
  // own switch. A user who set it either way keeps their choice.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // Loaded here, not at startup: every other command would carry the SDK's memory.
  const sdk = await loadSdk();
  const { S3Client } = sdk;
  const config = {
    ...(endpoint
      ? {
          endpoint: endpoint.href,
          forcePathStyle: true,
          // Third-party stores often reject the SDK's newer default checksums
          // (CRC32 trailers); each object carries its sha256 instead.
          requestChecksumCalculation: 'WHEN_REQUIRED' as const,
          responseChecksumValidation: 'WHEN_REQUIRED' as const,
        }
      : {}),
    requestHandler: { connectionTimeout: 10_000, requestTimeout: 120_000 },
  };
  let client = new S3Client(config);
  try {
    await client.config.region();
  } catch {
    client.destroy();
    client = new S3Client({ ...config, region: FALLBACK_REGION });
  }
  const name = endpoint ? endpoint.origin : 'aws';
  return new S3Store(sdk, client, name, options.multipartThreshold ?? MULTIPART_THRESHOLD);
}

/**
 * The custom endpoint (AWS_ENDPOINT_URL_S3, else AWS_ENDPOINT_URL), or
 * undefined for AWS itself. A malformed one is a usage error (exit 2): `run`
 * asks before anything is spent when a destination is set.
 */
export function s3EndpointOf(env: NodeJS.ProcessEnv): URL | undefined {
  for (const variable of ['AWS_ENDPOINT_URL_S3', 'AWS_ENDPOINT_URL'] as const) {
    const value = env[variable]?.trim();
    if (!value) continue;
    if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
      throw new UsageError(`${variable} must be an http(s) URL, got "${value}"`);
    }
    return new URL(value);
  }
  return undefined;
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

async function loadSdk() {
  const [{ GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client }, { Upload }] =
    await Promise.all([import('@aws-sdk/client-s3'), import('@aws-sdk/lib-storage')]);
  return { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client, Upload };
}

class S3Store implements ObjectStore {
  constructor(
    readonly sdk: Sdk,
    readonly client: S3Client,
    readonly name: string,
    readonly multipartThreshold: number,
  ) {}

  async head(bucket: string, key: string, signal?: AbortSignal): Promise<string | undefined> {
    try {
      const head = await this.client.send(
        new this.sdk.HeadObjectCommand({ Bucket: bucket, Key: key }),
        signal ? { abortSignal: signal } : {},
      );
      return head.Metadata?.[SHA256_METADATA];
    } catch (error) {
      // A missing object is an answer; a missing bucket (also a bare 404 on
      // HEAD) is found by the PUT. AWS answers 403 for a missing key when the
      // credentials may not s3:ListBucket (a least-privilege policy): unknown,
      // so the PUT decides (docs/deliver.md lists the permissions).
      const status = statusOf(error);
      if (status === 404 || status === 403) return undefined;
      throw this.failure(error, bucket);
    }
  }

  async read(bucket: string, key: string, signal?: AbortSignal): Promise<Buffer | StoreAbsence> {
    try {
      const got = await this.client.send(
        new this.sdk.GetObjectCommand({ Bucket: bucket, Key: key }),
        signal ? { abortSignal: signal } : {},
      );
      return got.Body ? Buffer.from(await got.Body.transformToByteArray()) : Buffer.alloc(0);
    } catch (error) {
      const status = statusOf(error);
      if (status === 404) return 'missing';
      if (status === 403) return 'forbidden';
      throw this.failure(error, bucket);
    }
  }

  async put(object: StoreObject, signal?: AbortSignal): Promise<void> {
    const params = {
      Bucket: object.bucket,
      Key: object.key,
      ContentType: object.contentType,
      Metadata: { [SHA256_METADATA]: object.sha256 },
    };
    try {
      if ('body' in object.source || object.bytes <= this.multipartThreshold) {
        const body =
          'body' in object.source ? object.source.body : await readFile(object.source.path);
        await this.client.send(
          new this.sdk.PutObjectCommand({ ...params, Body: body, ContentLength: body.length }),
          signal ? { abortSignal: signal } : {},
        );
        return;
      }
      const upload = new this.sdk.Upload({
        client: this.client,
        params: { ...params, Body: createReadStream(object.source.path) },
        partSize: PART_SIZE,
        queueSize: 2,
      });
      const onAbort = () => void upload.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      try {
        await upload.done();
      } finally {
        signal?.removeEventListener('abort', onAbort);
      }
    } catch (error) {
      throw this.failure(error, object.bucket);
    }
  }

  close(): void {
    this.client.destroy();
  }

  /** The SDK's error as ours: refused (configuration to fix) or unreachable (try later). */
  failure(error: unknown, bucket: string): Error {
    if (isLocalFileError(error)) return error as Error;
    if (error instanceof Error && error.name === 'AbortError') return error;
    const where = `the store ${this.name} (bucket "${bucket}")`;
    const status = statusOf(error);
    const name = error instanceof Error ? error.name : '';
    const detail = describe(error);
    // 408 and 429 are "not now" (the SDK retried them already): try later, not a refusal.
    const refused = status !== undefined && status < 500 && status !== 408 && status !== 429;
    if (name === 'CredentialsProviderError' || refused) {
      return new DeliveryRefusedError(`${where} refused the delivery: ${detail}`, error);
    }
    return new DeliveryUnreachableError(`could not reach ${where}: ${detail}`, error);
  }
}

function statusOf(error: unknown): number | undefined {
  const metadata = (error as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata;
  return typeof metadata?.httpStatusCode === 'number' ? metadata.httpStatusCode : undefined;
}

/** Reading our own file failed (it vanished, no permission): not the store's doing. */
function isLocalFileError(error: unknown): boolean {
  const { code, syscall } = (error ?? {}) as { code?: unknown; syscall?: unknown };
  return typeof code === 'string' && (syscall === 'open' || syscall === 'read');
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  const status = statusOf(error);
  const parts = [
    error.name !== 'Error' && error.name !== error.message ? error.name : undefined,
    typeof code === 'string' && !error.message.includes(code) ? code : undefined,
    status !== undefined ? `HTTP ${status}` : undefined,
  ].filter((p) => p !== undefined);
  const message = error.message || 'no message';
  return parts.length > 0 ? `${message} (${parts.join(', ')})` : message;
}
