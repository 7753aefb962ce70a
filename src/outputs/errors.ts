/** Typed errors of the outputs module. */
import { EXIT, IbatchError } from '../shared/index.js';

/** A computed output path would land outside the output folder: never written. */
export class PathEscapeError extends IbatchError {
  constructor(message: string) {
    super('path_escape', message, EXIT.invalid);
  }
}

/** A naming template uses an unknown placeholder or is malformed. */
export class OutputTemplateError extends IbatchError {
  constructor(message: string) {
    super('output_template', message, EXIT.invalid);
  }
}

export const DOWNLOAD_FAILURES = {
  /** Not an `http:` or `https:` URL (`data:`, `ftp:`, `file:`, `javascript:`), or no URL at all. */
  scheme: 'scheme',
  http: 'http',
  contentType: 'content_type',
  tooLarge: 'too_large',
  timeout: 'timeout',
  redirect: 'redirect',
  network: 'network',
  aborted: 'aborted',
  /** The destination holds another file, which is never replaced. */
  exists: 'exists',
} as const;
export type DownloadFailure = (typeof DOWNLOAD_FAILURES)[keyof typeof DOWNLOAD_FAILURES];

/**
 * An output could not be downloaded. `retryable` says whether trying again
 * later may help (timeouts, connection trouble, 5xx, 408, 429): the run
 * stops resumable. Otherwise (another scheme, a redirect to another origin,
 * another 4xx, a body that is not the media it claims, an oversized body)
 * the URL can never serve the file: the output fails for good.
 */
export class DownloadError extends IbatchError {
  readonly reason: DownloadFailure;
  readonly status: number | undefined;

  constructor(
    reason: DownloadFailure,
    message: string,
    options: { retryable: boolean; status?: number; cause?: unknown },
  ) {
    super('download_failed', message, EXIT.unreachable, {
      cause: options.cause,
      retryable: options.retryable,
    });
    this.reason = reason;
    this.status = options.status;
  }
}

/** Why a write failed for lack of space: ENOSPC (the disk is full) or EDQUOT (the quota is). */
export function diskFullCode(error: unknown): 'ENOSPC' | 'EDQUOT' | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' ? code : undefined;
}

/**
 * Writing an output failed because the disk holding `folder` is full (or the
 * quota is used up). Not the network's fault and not the output's: the run
 * stops (exit 4, resumable, like any stop the user must clear first) and the
 * output is downloaded again by the resume; what is done stays done.
 */
export class OutputDiskFullError extends IbatchError {
  readonly folder: string;
  readonly errno: 'ENOSPC' | 'EDQUOT';

  constructor(folder: string, errno: 'ENOSPC' | 'EDQUOT', options?: { cause?: unknown }) {
    const what =
      errno === 'EDQUOT'
        ? `the disk quota for ${folder} is used up`
        : `the disk holding ${folder} is full`;
    super('disk_full', `${what} (${errno})`, EXIT.unreachable, {
      ...options,
      retryable: true,
    });
    this.folder = folder;
    this.errno = errno;
  }

  /** What the user does about it (the run's final message adds it). */
  static readonly NEXT_STEP = 'Free space, then run again to resume; nothing was lost';
}

/**
 * Another process kept the output folder's manifest lock longer than a
 * manifest write takes: the row is not recorded (the journal has it; the
 * next run or `ibatch report` rewrites the manifest from the journal).
 */
export class ManifestLockedError extends IbatchError {
  constructor(lockPath: string, holder: string) {
    super(
      'manifest_locked',
      `the manifest lock ${lockPath} is held by ${holder}: the manifest was not written. Run again to resume (the journal keeps every row).`,
      EXIT.unreachable,
    );
  }
}
