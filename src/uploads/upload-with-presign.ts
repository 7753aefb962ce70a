/**
 * Presign + PUT, keeping the 120 s lifetime of the presigned URL in mind: when
 * the PUT cannot start in time (it may wait on the uploads bucket) or the
 * storage answers that the URL expired, a fresh presign is requested, a bounded
 * number of times. The transport is injected: the engine passes the service
 * client's `presignAsset` and `upload`.
 */
import type { AssetUpload, AssetUploadRequest } from '../contract/index.js';
import { PresignExpiredError } from './errors.js';
import type { PreparedUpload } from './prepare-upload.js';

/** Asks the service for a presigned upload URL (`POST /assets/presign`). */
export type PresignFn = (request: AssetUploadRequest) => Promise<AssetUpload>;

export interface PutContext {
  /**
   * Epoch ms after which the presigned URL must not be used. A PutFn that waits
   * (e.g. on the uploads bucket) and cannot start before it should throw
   * {@link PresignExpiredError}.
   */
  readonly expiresAt: number;
  /** 1-based presign attempt. */
  readonly attempt: number;
}

/** Sends the file's bytes to `presign.uploadUrl` with `presign.headers` (never the API key). */
export type PutFn = (
  presign: AssetUpload,
  file: PreparedUpload,
  context: PutContext,
) => Promise<void>;

export interface UploadWithPresignOptions {
  /** @default Date.now */
  readonly now?: () => number;
  /**
   * Presigns tried before giving up with {@link PresignExpiredError}.
   * @default 3
   */
  readonly maxPresigns?: number;
  /**
   * Margin kept before the expiry: a PUT of up to 8 MiB must finish, not just
   * start, inside the lifetime.
   * @default 10_000
   */
  readonly safetyMarginMs?: number;
  /** Recognises a PUT failure meaning "URL expired". @default {@link isPresignExpiry} */
  readonly isExpired?: (error: unknown) => boolean;
}

/**
 * Uploads a prepared file and returns its permanent `assetUrl`. Errors other
 * than expiry are passed through untouched (the client classifies them).
 */
export async function uploadWithPresign(
  file: PreparedUpload,
  presignFn: PresignFn,
  putFn: PutFn,
  options: UploadWithPresignOptions = {},
): Promise<string> {
  const now = options.now ?? Date.now;
  const maxPresigns = options.maxPresigns ?? 3;
  const margin = options.safetyMarginMs ?? 10_000;
  const isExpired = options.isExpired ?? isPresignExpiry;
  if (!Number.isInteger(maxPresigns) || maxPresigns < 1) {
    throw new TypeError(`Expected \`maxPresigns\` to be a positive integer, got ${maxPresigns}`);
  }
  for (let attempt = 1; attempt <= maxPresigns; attempt++) {
    // Stamp before asking: the lifetime may have started on the server before we read the answer.
    const requestedAt = now();
    const presign = await presignFn({ mimeType: file.mime, sizeBytes: file.sizeBytes });
    const expiresAt = requestedAt + presign.expiresInSeconds * 1000 - margin;
    if (now() >= expiresAt) continue;
    try {
      await putFn(presign, file, { expiresAt, attempt });
      return presign.assetUrl;
    } catch (error) {
      if (!isExpired(error)) throw error;
    }
  }
  throw new PresignExpiredError(
    `upload of ${file.path} failed: the presigned URL expired ${maxPresigns} times in a row`,
  );
}

/**
 * Default expiry test: a {@link PresignExpiredError}, or an HTTP-ish error with
 * status 403/410 or a code/message mentioning expiry. The reference does not
 * show what storage answers for an expired URL, so this stays permissive.
 */
export function isPresignExpiry(error: unknown): boolean {
  if (error instanceof PresignExpiredError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { status, statusCode, code, message } = error as Record<string, unknown>;
  const httpStatus = typeof status === 'number' ? status : statusCode;
  if (httpStatus === 410) return true;
  const text = `${typeof code === 'string' ? code : ''} ${typeof message === 'string' ? message : ''}`;
  return (
    /expired?/i.test(text) && (httpStatus === undefined || httpStatus === 403 || httpStatus === 400)
  );
}
