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
 * later may help (timeouts, connection trouble, 5xx, 429); a 404, a wrong
 * content type or an oversized body will not get better.
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
