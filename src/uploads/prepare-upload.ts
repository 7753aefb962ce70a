/**
 * Everything that can be checked about a local file before spending a request:
 * its real type (from the bytes), its size against the service limit, and its
 * content hash (the journal's key for reusing an earlier upload).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { LIMITS, type MediaCategory, type MediaType } from '../contract/index.js';
import { UploadRejectedError } from './errors.js';
import { SNIFF_BYTES, sniffMediaType } from './media-type.js';

export interface PreparedUpload {
  /** Absolute path of the local file. */
  readonly path: string;
  readonly sizeBytes: number;
  /** Lower-case hex sha256 of the content. */
  readonly sha256: string;
  /** Sniffed MIME type: what the presign request declares. */
  readonly mime: string;
  readonly ext: string;
  readonly category: MediaCategory;
}

export interface PrepareUploadOptions {
  /**
   * Categories accepted for this use of the file.
   * @default all of image, video, audio
   */
  readonly allowed?: readonly MediaCategory[];
  /**
   * Exact types accepted (checked after `allowed`); training passes
   * `TRAINING_IMAGE_TYPES`.
   */
  readonly allowedTypes?: readonly MediaType[];
}

/**
 * Reads, sniffs and hashes a file. Throws {@link UploadRejectedError} (exit 2)
 * naming the file when it is empty, larger than 8 MiB, not a recognised media
 * type, or not of an allowed type. The size is checked before hashing so an
 * oversized file costs one `stat`.
 */
export async function prepareUpload(
  path: string,
  options: PrepareUploadOptions = {},
): Promise<PreparedUpload> {
  const handle = await open(path, 'r').catch((cause: unknown) => {
    throw new UploadRejectedError(path, `cannot read ${path}: ${describe(cause)}`);
  });
  let head: Uint8Array;
  let sizeBytes: number;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UploadRejectedError(path, `${path} is not a regular file`);
    sizeBytes = stat.size;
    checkSize(path, sizeBytes);
    const buffer = Buffer.alloc(Math.min(SNIFF_BYTES, sizeBytes));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    head = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const type = sniffMediaType(head);
  if (!type) {
    throw new UploadRejectedError(
      path,
      `${path} is not a recognised image, video or audio file (its bytes match no known format)`,
    );
  }
  checkAllowed(path, type, options);
  const sha256 = await hashFile(path);
  return Object.freeze({
    path,
    sizeBytes,
    sha256,
    mime: type.mime,
    ext: type.ext,
    category: type.category,
  });
}

function checkSize(path: string, sizeBytes: number): void {
  if (sizeBytes < 1) throw new UploadRejectedError(path, `${path} is empty (0 bytes)`);
  if (sizeBytes > LIMITS.uploadMaxBytes) {
    throw new UploadRejectedError(
      path,
      `${path} is ${sizeBytes} bytes (${mib(sizeBytes)} MiB); the service accepts at most ` +
        `${LIMITS.uploadMaxBytes} bytes (8 MiB) per upload`,
    );
  }
}

function checkAllowed(path: string, type: MediaType, options: PrepareUploadOptions): void {
  if (options.allowed && !options.allowed.includes(type.category)) {
    throw new UploadRejectedError(
      path,
      `${path} is ${type.mime}; only ${options.allowed.join(', ')} files are accepted here`,
    );
  }
  if (options.allowedTypes && !options.allowedTypes.some((t) => t.mime === type.mime)) {
    const names = options.allowedTypes.map((t) => t.mime).join(', ');
    throw new UploadRejectedError(path, `${path} is ${type.mime}; accepted types: ${names}`);
  }
}

/** Streams a file through sha256 (files may be up to 8 MiB; never load more than a chunk). */
export async function hashFile(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

const mib = (bytes: number): string => (bytes / 1_048_576).toFixed(2);

function describe(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
}
