/**
 * The presigned upload PUT. It goes through its own dispatcher and carries
 * exactly the headers the presign answer listed (plus Content-Length): never
 * the Authorization header, never to an unsafe URL.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { type AssetUpload, LIMITS } from '../contract/index.js';
import { type Logger, type Sleep, UsageError } from '../shared/index.js';
import { isSafeUrl } from './base-url.js';
import { ApiError, ContractError, failureOfThrown } from './errors.js';
import { type ClientEvent, retryEvent } from './events.js';
import type { ResolvedTimeouts } from './options.js';
import { type Failure, RetryCounter, type RetryOptions } from './retry-policy.js';
import { send } from './transport.js';

/** Bytes in memory, a file path, or a stream (streams cannot be retried). */
export type UploadSource = Buffer | Uint8Array | string | Readable;

export interface UploadOptions {
  /** Size of a stream source; when absent the stream is read into memory first. */
  readonly sizeBytes?: number;
  readonly signal?: AbortSignal;
}

export interface UploadResult {
  /** The permanent address to use in generation and training requests. */
  readonly assetUrl: string;
  readonly status: number;
  readonly sizeBytes: number;
}

export interface UploadDeps {
  readonly dispatcher: Dispatcher;
  readonly logger: Logger;
  readonly onEvent: ((event: ClientEvent) => void) | undefined;
  readonly limits: ResolvedTimeouts;
  readonly retry: RetryOptions;
  readonly sleep: Sleep;
}

interface PreparedBody {
  readonly sizeBytes: number;
  /** Opens the body for one attempt; undefined after a one-shot stream was used. */
  readonly open: () => Buffer | Uint8Array | Readable;
  readonly repeatable: boolean;
}

export async function uploadAsset(
  deps: UploadDeps,
  presign: AssetUpload,
  source: UploadSource,
  options: UploadOptions & { readonly signal?: AbortSignal | undefined },
): Promise<UploadResult> {
  const url = checkUploadUrl(presign);
  const body = await prepareBody(source, options.sizeBytes);
  const headers: Record<string, string> = {
    ...presign.headers,
    'content-length': String(body.sizeBytes),
  };
  const retries = new RetryCounter(body.repeatable, deps.retry);
  for (let attempt = 1; ; attempt++) {
    let error: unknown;
    let failure: Failure;
    try {
      const exchange = await send(
        deps.dispatcher,
        {
          operation: 'upload',
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'PUT',
          headers,
          body: body.open(),
          signal: options.signal,
        },
        deps.limits,
      );
      deps.logger.debug(
        { endpoint: 'upload', status: exchange.status, attempt },
        'upload response',
      );
      if (exchange.status >= 200 && exchange.status < 300) {
        return { assetUrl: presign.assetUrl, status: exchange.status, sizeBytes: body.sizeBytes };
      }
      error = new ApiError({
        status: exchange.status,
        code: `http_${exchange.status}`,
        message: exchange.body.toString('utf8').slice(0, 200) || `HTTP ${exchange.status}`,
        endpoint: 'upload',
      });
      failure = { type: 'status', status: exchange.status };
    } catch (caught) {
      failure = failureOfThrown(caught);
      error = caught;
    }
    const decision = retries.next(failure);
    if (!decision.retry) throw error;
    deps.onEvent?.(retryEvent('upload', attempt + 1, decision, failure));
    await deps.sleep(decision.delayMs, options.signal);
  }
}

function checkUploadUrl(presign: AssetUpload): URL {
  if (presign.method.toUpperCase() !== 'PUT') {
    throw new ContractError('presignAsset', 'method', `expected PUT, got \`${presign.method}\``);
  }
  let url: URL;
  try {
    url = new URL(presign.uploadUrl);
  } catch (cause) {
    throw new ContractError('presignAsset', 'uploadUrl', 'not an absolute URL', { cause });
  }
  if (!isSafeUrl(url)) {
    throw new ContractError('presignAsset', 'uploadUrl', 'expected https (or http on loopback)');
  }
  return url;
}

async function prepareBody(
  source: UploadSource,
  sizeBytes: number | undefined,
): Promise<PreparedBody> {
  if (typeof source === 'string') {
    const info = await stat(source);
    checkSize(info.size);
    return { sizeBytes: info.size, open: () => createReadStream(source), repeatable: true };
  }
  if (source instanceof Uint8Array) {
    checkSize(source.byteLength);
    return { sizeBytes: source.byteLength, open: () => source, repeatable: true };
  }
  if (source instanceof Readable) {
    if (sizeBytes !== undefined) {
      checkSize(sizeBytes);
      return { sizeBytes, open: () => source, repeatable: false };
    }
    const bytes = await readAll(source);
    return { sizeBytes: bytes.length, open: () => bytes, repeatable: true };
  }
  throw new TypeError(
    'Expected the upload source to be a Buffer, Uint8Array, file path or Readable',
  );
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    size += buf.length;
    checkSize(size);
    chunks.push(buf);
  }
  checkSize(size);
  return Buffer.concat(chunks, size);
}

function checkSize(size: number): void {
  if (!Number.isInteger(size) || size < 1 || size > LIMITS.uploadMaxBytes) {
    throw new UsageError(`Expected an upload of 1 to ${LIMITS.uploadMaxBytes} bytes, got ${size}`);
  }
}
