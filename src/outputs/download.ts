/**
 * Downloads one output file safely: checked status, checked type (sniffed from
 * the bytes, preferred over the declared Content-Type), a hard size cap that
 * also stops endless bodies, idle and total timeouts, streamed to a temporary
 * file beside the destination, fsynced, then moved into place. A failure at
 * any point leaves no partial file behind. A file already at the destination
 * is never replaced (unless asked): the move is a hard link, which fails
 * instead of overwriting, so even a file created a moment earlier is safe.
 *
 * Redirects: followed only within the URL's own origin (at most
 * `maxRedirects`); a redirect to another origin is refused, so an output URL
 * can never make us fetch from an unexpected host.
 */
import { createHash, randomBytes } from 'node:crypto';
import { type FileHandle, link, lstat, mkdir, open, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { type Dispatcher, request, errors as undiciErrors } from 'undici';
import { type MediaCategory, type MediaType, meaningOfStatus } from '../contract/index.js';
import {
  categoryOfMime,
  hashFile,
  mediaTypeForMime,
  SNIFF_BYTES,
  sniffMediaType,
} from '../uploads/index.js';
import { DOWNLOAD_FAILURES, DownloadError } from './errors.js';
import { fsyncDir } from './fs-durable.js';
import { assertNotProtected, ProtectedPathError } from './protected-paths.js';

export interface DownloadOptions {
  readonly url: string;
  /**
   * Absolute destination, already checked with `resolveInside`; or a function
   * that picks it once the media type (hence the extension) is known from the
   * first bytes. The function must return a checked absolute path too.
   */
  readonly dest: string | ((type: MediaType) => string);
  /** Bytes allowed; the download is aborted as soon as the body goes past it. */
  readonly maxBytes: number;
  /** Accepted categories. @default image, video, audio */
  readonly allowedTypes?: readonly MediaCategory[];
  readonly signal?: AbortSignal;
  readonly dispatcher?: Dispatcher;
  /** Longest wait for headers or between two body chunks. @default 30_000 */
  readonly idleTimeoutMs?: number;
  /** Longest time for the whole download, so a trickling body cannot hang a run. @default 600_000 */
  readonly timeoutMs?: number;
  /** Same-origin redirects followed. @default 5 */
  readonly maxRedirects?: number;
  /**
   * Paths the file may never land on (the journal, the job file, its inputs):
   * checked before the temp file is created and again just before the rename.
   */
  readonly protectedPaths?: readonly string[];
  /**
   * A file already at the destination: `keep` (the default) never replaces
   * it. When it holds the very bytes downloaded it is taken as this download
   * (a resume after a kill between the move and the journal commit);
   * otherwise `alternative` names another destination, or the download fails
   * (`exists`). `replace` replaces it (repairing a file the caller owns).
   */
  readonly existing?: 'keep' | 'replace';
  /**
   * Another checked absolute destination when `taken` (the one tried last,
   * in the same folder) holds another file; `tries` counts from 1.
   */
  readonly alternative?: (taken: string, tries: number) => string;
}

/** Alternatives tried before a taken destination fails the download. */
const MAX_ALTERNATIVES = 8;

export interface DownloadResult {
  /** Absolute path the file was renamed to. */
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  /** The sniffed MIME type (the declared one only when the bytes are not recognised). */
  readonly contentType: string;
  readonly ext: string;
  readonly category: MediaCategory;
}

const NEUTRAL_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', '']);

/** Downloads `url` to its destination; throws {@link DownloadError} on any failure. */
export async function downloadOutput(options: DownloadOptions): Promise<DownloadResult> {
  const total = AbortSignal.timeout(options.timeoutMs ?? 600_000);
  const signal = options.signal ? AbortSignal.any([options.signal, total]) : total;
  try {
    const response = await fetchFollowingSameOrigin(options, signal);
    return await saveBody(response, options, signal);
  } catch (error) {
    // Not a download failure: the name is wrong, and fetching again cannot fix it.
    if (error instanceof ProtectedPathError) throw error;
    throw toDownloadError(error, options);
  }
}

async function fetchFollowingSameOrigin(
  options: DownloadOptions,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const idle = options.idleTimeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  let url = new URL(options.url);
  const origin = url.origin;
  for (let hop = 0; ; hop++) {
    const response = await request(url, {
      method: 'GET',
      signal,
      headersTimeout: idle,
      bodyTimeout: idle,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const { statusCode } = response;
    if (statusCode >= 300 && statusCode < 400 && statusCode !== 304) {
      await response.body.dump();
      const location = header(response, 'location');
      const next = location ? new URL(location, url) : undefined;
      if (!next || next.origin !== origin || hop >= maxRedirects) {
        throw new DownloadError(
          DOWNLOAD_FAILURES.redirect,
          next && next.origin !== origin
            ? `refused redirect of ${options.url} to another origin (${next.origin})`
            : `too many or broken redirects for ${options.url}`,
          { retryable: false, status: statusCode },
        );
      }
      url = next;
      continue;
    }
    if (statusCode !== 200) {
      await response.body.dump().catch(() => undefined);
      throw new DownloadError(
        DOWNLOAD_FAILURES.http,
        `GET ${options.url} answered HTTP ${statusCode}`,
        {
          retryable: meaningOfStatus(statusCode).retryable,
          status: statusCode,
        },
      );
    }
    return response;
  }
}

async function saveBody(
  response: Dispatcher.ResponseData,
  options: DownloadOptions,
  signal: AbortSignal,
): Promise<DownloadResult> {
  const declared = header(response, 'content-type');
  const declaredBare = declared?.split(';')[0]?.trim().toLowerCase() ?? '';
  const length = Number(header(response, 'content-length'));
  const reject = async (reason: DownloadError): Promise<never> => {
    // undici emits an AbortError on destroy: swallow it, `reason` is what we report.
    response.body.on('error', () => undefined);
    response.body.destroy();
    throw reason;
  };
  if (!categoryOfMime(declared) && !NEUTRAL_TYPES.has(declaredBare)) {
    await reject(typeError(`${options.url} is ${declared}, not an image, video or audio file`));
  }
  if (Number.isFinite(length) && length > options.maxBytes) {
    await reject(tooLarge(options, `declares ${length} bytes`));
  }
  const hash = createHash('sha256');
  let head = Buffer.alloc(0);
  let bytes = 0;
  let part: PartFile | undefined;
  const begin = async (): Promise<PartFile> => {
    const type = decideType(head, declared, options);
    const dest = typeof options.dest === 'string' ? options.dest : options.dest(type);
    const created = await PartFile.create(dest, type, options.protectedPaths ?? []);
    await created.write(head);
    return created;
  };
  try {
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      signal.throwIfAborted();
      bytes += chunk.length;
      if (bytes > options.maxBytes) {
        await reject(tooLarge(options, `sent more than ${options.maxBytes} bytes`));
      }
      hash.update(chunk);
      if (part) await part.write(chunk);
      else {
        head = Buffer.concat([head, chunk]);
        if (head.length >= SNIFF_BYTES) part = await begin();
      }
    }
    part ??= await begin();
    const sha256 = hash.digest('hex');
    const dest = await part.commit(sha256, options);
    return {
      path: dest,
      bytes,
      sha256,
      contentType: part.type.mime,
      ext: part.type.ext,
      category: part.type.category,
    };
  } finally {
    await part?.discard();
  }
}

/** `.<name>.part-<random>` beside the destination; renamed into place on commit, removed otherwise. */
class PartFile {
  private handle: FileHandle | undefined;
  private committed = false;

  private constructor(
    readonly dest: string,
    readonly type: MediaType,
    private readonly tempPath: string,
    private readonly protectedPaths: readonly string[],
    handle: FileHandle,
  ) {
    this.handle = handle;
  }

  static async create(
    dest: string,
    type: MediaType,
    protectedPaths: readonly string[],
  ): Promise<PartFile> {
    if (!path.isAbsolute(dest)) throw new TypeError(`Expected an absolute \`dest\`, got ${dest}`);
    assertNotProtected(dest, protectedPaths);
    const dir = path.dirname(dest);
    await mkdir(dir, { recursive: true });
    const tempPath = path.join(
      dir,
      `.${path.basename(dest)}.part-${randomBytes(6).toString('hex')}`,
    );
    return new PartFile(dest, type, tempPath, protectedPaths, await open(tempPath, 'wx'));
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (chunk.length > 0) await this.handle?.write(chunk);
  }

  /**
   * Moves the temp file into place and returns where it landed: `dest`, or
   * an alternative when `dest` holds another file (see DownloadOptions).
   */
  async commit(
    sha256: string,
    options: Pick<DownloadOptions, 'existing' | 'alternative'>,
  ): Promise<string> {
    const handle = this.handle;
    if (!handle) throw new Error('part file already closed');
    await handle.sync();
    this.handle = undefined;
    await handle.close();
    let dest = this.dest;
    for (let tries = 1; ; tries++) {
      // Again at the last moment: a symlink planted meanwhile must not redirect the move.
      assertNotProtected(dest, this.protectedPaths);
      if (options.existing === 'replace') {
        await rename(this.tempPath, dest);
        break;
      }
      if (await placeWithoutReplacing(this.tempPath, dest)) break;
      if (await holdsBytes(dest, sha256)) break; // our own file from a killed process
      if (!options.alternative || tries > MAX_ALTERNATIVES) {
        throw new DownloadError(
          DOWNLOAD_FAILURES.exists,
          `${dest} already exists and holds another file, which is never replaced`,
          { retryable: false },
        );
      }
      dest = options.alternative(dest, tries);
    }
    this.committed = true;
    await unlink(this.tempPath).catch(() => undefined); // still there unless renamed
    await fsyncDir(path.dirname(dest));
    return dest;
  }

  /** Closes and removes the temp file unless it was committed. Never throws. */
  async discard(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
    if (!this.committed) await unlink(this.tempPath).catch(() => undefined);
  }
}

/**
 * Hard-links `temp` to `dest`, which fails (false) when `dest` exists: no
 * window in which another file could be overwritten. Where hard links are
 * not supported, a checked rename (the window is only the check).
 */
async function placeWithoutReplacing(temp: string, dest: string): Promise<boolean> {
  try {
    await link(temp, dest);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') {
      throw error;
    }
  }
  if (
    await lstat(dest).then(
      () => true,
      () => false,
    )
  )
    return false;
  await rename(temp, dest);
  return true;
}

/** `file` is a regular file (not a link) whose sha256 is `sha256`. */
async function holdsBytes(file: string, sha256: string): Promise<boolean> {
  try {
    return (await lstat(file)).isFile() && (await hashFile(file)) === sha256;
  } catch {
    return false;
  }
}

function decideType(
  head: Buffer,
  declared: string | undefined,
  options: DownloadOptions,
): MediaType {
  const type = sniffMediaType(head) ?? mediaTypeForMime(declared);
  if (!type) {
    throw typeError(
      `${options.url}: neither its bytes nor its Content-Type (${declared}) name a known media type`,
    );
  }
  const allowed = options.allowedTypes;
  if (allowed && !allowed.includes(type.category)) {
    throw typeError(`${options.url} is ${type.mime}; expected ${allowed.join(' or ')}`);
  }
  return type;
}

const typeError = (message: string): DownloadError =>
  new DownloadError(DOWNLOAD_FAILURES.contentType, message, { retryable: false });

const tooLarge = (options: DownloadOptions, what: string): DownloadError =>
  new DownloadError(
    DOWNLOAD_FAILURES.tooLarge,
    `${options.url} ${what}; the limit is ${options.maxBytes} bytes`,
    { retryable: false },
  );

function header(response: Dispatcher.ResponseData, name: string): string | undefined {
  const value = response.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function toDownloadError(error: unknown, options: DownloadOptions): DownloadError {
  if (error instanceof DownloadError) return error;
  if (error instanceof TypeError && error.message.startsWith('Expected')) throw error;
  if (options.signal?.aborted) {
    return new DownloadError(DOWNLOAD_FAILURES.aborted, `download of ${options.url} was aborted`, {
      retryable: true,
      cause: error,
    });
  }
  const timedOut =
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'));
  const reason = timedOut ? DOWNLOAD_FAILURES.timeout : DOWNLOAD_FAILURES.network;
  const detail = error instanceof Error ? error.message : String(error);
  return new DownloadError(reason, `download of ${options.url} failed (${reason}): ${detail}`, {
    retryable: true,
    cause: error,
  });
}
