/**
 * Downloads one output file safely: only `http:`/`https:`, checked status,
 * checked type (the bytes must be a known media type, of the category the
 * Content-Type declares; the sniffed type names the file), a hard size cap that
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
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Dispatcher } from 'undici';
import { type MediaCategory, type MediaType, meaningOfStatus } from '../contract/index.js';
import { asLocalFileError, IbatchError, linkSignals, undici } from '../shared/index.js';
import { categoryOfMime, mediaTypeForMime, SNIFF_BYTES, sniffMediaType } from '../uploads/index.js';
import { DOWNLOAD_FAILURES, DownloadError, diskFullCode, OutputDiskFullError } from './errors.js';
import { PartFile } from './part-file.js';
import type { ProtectedPathError } from './protected-paths.js';

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
  /** `partFileTag` of the job downloading, in the temp file's name. @default none */
  readonly partTag?: string;
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
  /**
   * Metadata to write into the file before it is put in place: the bytes as
   * served in, the bytes to keep out (undefined keeps them as served). Must be
   * deterministic, so a resume recognises its own file by its hash. Files
   * over {@link MAX_EMBED_BYTES} are kept as served.
   */
  readonly embed?: (type: MediaType, served: Buffer) => Buffer | undefined;
}

/** Largest file `embed` is given (it holds the file in memory). */
export const MAX_EMBED_BYTES = 64 * 1024 * 1024;

export interface DownloadResult {
  /** Absolute path the file was renamed to. */
  readonly path: string;
  /** Size and sha256 of the file as written (with embedded metadata). */
  readonly bytes: number;
  readonly sha256: string;
  /** sha256 of the bytes as served. */
  readonly servedSha256: string;
  /** Whether `embed` changed the bytes. */
  readonly embedded: boolean;
  /** The sniffed MIME type (the declared one only when the bytes are not recognised). */
  readonly contentType: string;
  readonly ext: string;
  readonly category: MediaCategory;
}

const NEUTRAL_TYPES = new Set(['application/octet-stream', 'binary/octet-stream', '']);

/**
 * Downloads `url` to its destination; throws {@link DownloadError} on any
 * failure of the download, {@link OutputDiskFullError} when the file cannot
 * be written for lack of space, {@link ProtectedPathError} for a name that
 * may never be written, `PathEscapeError` for a path through a link leaving
 * the folder and `LocalFileError` for a path the system refuses.
 */
export async function downloadOutput(options: DownloadOptions): Promise<DownloadResult> {
  // The whole download's bound, released at its end: no timer or listener
  // outlives it (the caller's signal is the run's, alive for the whole run).
  const linked = linkSignals([options.signal], { timeoutMs: options.timeoutMs ?? 600_000 });
  const { signal } = linked;
  try {
    const response = await fetchFollowingSameOrigin(httpUrl(options.url), options, signal);
    return await saveBody(response, options, signal);
  } catch (error) {
    // Not download failures: the name is wrong, the disk is full, or the
    // local path refused the file (a link out of the folder, a permission).
    if (error instanceof IbatchError && !(error instanceof DownloadError)) throw error;
    throw asLocalFileError(error) ?? toDownloadError(error, options);
  } finally {
    linked.release();
  }
}

/**
 * The URL when it is `http:` or `https:`. Any other scheme (`data:`, `ftp:`,
 * `file:`, `javascript:`) or an unparsable URL can never be downloaded, so it
 * fails for good instead of looking like a network fault.
 */
function httpUrl(raw: string): URL {
  const url = URL.parse(raw);
  if (url?.protocol === 'http:' || url?.protocol === 'https:') return url;
  const shown = raw.length > 80 ? `${raw.slice(0, 80)}...` : raw;
  throw new DownloadError(
    DOWNLOAD_FAILURES.scheme,
    url
      ? `refused to download ${shown}: its scheme ${url.protocol} is not http: or https:`
      : `refused to download ${shown}: not a URL`,
    { retryable: false },
  );
}

async function fetchFollowingSameOrigin(
  first: URL,
  options: DownloadOptions,
  signal: AbortSignal,
): Promise<Dispatcher.ResponseData> {
  const idle = options.idleTimeoutMs ?? 30_000;
  const maxRedirects = options.maxRedirects ?? 5;
  let url = first;
  const origin = url.origin;
  for (let hop = 0; ; hop++) {
    const response = await undici().request(url, {
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
  let folder: string | undefined;
  const begin = async (): Promise<PartFile> => {
    const type = decideType(head, declared, options);
    const dest = typeof options.dest === 'string' ? options.dest : options.dest(type);
    folder = path.dirname(dest);
    const created = await PartFile.create(
      dest,
      type,
      options.protectedPaths ?? [],
      options.partTag,
    );
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
    const servedSha256 = hash.digest('hex');
    const { embed } = options;
    const type = part.type;
    const written =
      embed && bytes <= MAX_EMBED_BYTES
        ? await part.rewrite((served) => embed(type, served))
        : undefined;
    const sha256 = written?.sha256 ?? servedSha256;
    const dest = await part.commit(sha256, options);
    return {
      path: dest,
      bytes: written?.bytes ?? bytes,
      sha256,
      servedSha256,
      embedded: written !== undefined,
      contentType: part.type.mime,
      ext: part.type.ext,
      category: part.type.category,
    };
  } catch (error) {
    const errno = diskFullCode(error);
    if (errno && folder) throw new OutputDiskFullError(folder, errno, { cause: error });
    throw error;
  } finally {
    await part?.discard();
  }
}

/**
 * The type of the body from its first bytes. The Content-Type is never
 * trusted alone: bytes that are no known media type (an HTML error page
 * served as `image/png`) are refused, and so are bytes of another category
 * than the declared one. Within one category the bytes win (a PNG served as
 * `image/jpeg` is saved as `.png`).
 */
function decideType(
  head: Buffer,
  declared: string | undefined,
  options: DownloadOptions,
): MediaType {
  const type = sniffMediaType(head);
  const claimed = mediaTypeForMime(declared)?.mime ?? declared ?? 'no Content-Type';
  if (!type) {
    throw typeError(
      `${options.url} is declared ${claimed}, but its bytes are no image, video or audio file (they start ${JSON.stringify(printable(head))})`,
    );
  }
  const declaredCategory = categoryOfMime(declared);
  if (declaredCategory && declaredCategory !== type.category) {
    throw typeError(`${options.url} is declared ${claimed}, but its bytes are ${type.mime}`);
  }
  const allowed = options.allowedTypes;
  if (allowed && !allowed.includes(type.category)) {
    throw typeError(`${options.url} is ${type.mime}; expected ${allowed.join(' or ')}`);
  }
  return type;
}

/** The first bytes as text a message can show (control and non-ASCII bytes as `.`). */
function printable(head: Buffer): string {
  return head
    .subarray(0, 16)
    .toString('latin1')
    .replace(/[^\x20-\x7e]/g, '.');
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
  const { errors } = undici();
  const timedOut =
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError ||
    (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'));
  const reason = timedOut ? DOWNLOAD_FAILURES.timeout : DOWNLOAD_FAILURES.network;
  const detail = error instanceof Error ? error.message : String(error);
  return new DownloadError(reason, `download of ${options.url} failed (${reason}): ${detail}`, {
    retryable: true,
    cause: error,
  });
}
