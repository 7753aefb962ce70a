/**
 * Base class of every error ibatch raises on purpose. Each subclass has a
 * stable `code` (for scripts and tests) and carries its own meaning, like
 * Temporal's failures carry `nonRetryable`: the process exit code, the reason
 * it stops a run (or null: only its item failed) and whether repeating the
 * same request may succeed. Callers ask the error; they never re-derive its
 * meaning from an HTTP status. Only the CLI entry point (cli/main.ts) turns
 * an error into the process's exit code.
 */
import { EXIT, type ExitCode, type StopReason, stopReasonForExit } from './exit-codes.js';

export interface IbatchErrorOptions {
  readonly cause?: unknown;
  /** Whether repeating the same request may succeed (a transient fault). @default false */
  readonly retryable?: boolean;
  /** Why it stops a run, when its exit code alone does not say (a delivery's exit 4). */
  readonly stopReason?: StopReason;
}

export class IbatchError extends Error {
  readonly code: string;
  readonly exitCode: ExitCode;
  readonly retryable: boolean;
  readonly #stopReason: StopReason | undefined;

  constructor(code: string, message: string, exitCode: ExitCode, options?: IbatchErrorOptions) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.retryable = options?.retryable ?? false;
    this.#stopReason = options?.stopReason;
  }

  /** Why this error stops a run, or null when it fails only its own item. */
  get stopReason(): StopReason | null {
    return this.#stopReason ?? stopReasonForExit(this.exitCode);
  }
}

/** Bad arguments, flags or configuration: nothing was spent. */
export class UsageError extends IbatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('usage', message, EXIT.invalid, options);
  }
}

/** The run stopped because a signal asked it to. */
export class InterruptedError extends IbatchError {
  constructor(message = 'interrupted') {
    super('interrupted', message, EXIT.interrupted);
  }
}

/**
 * Something ibatch did not raise on purpose (a bug, an unmapped system
 * error). It counts as "unreachable" (exit 4, the run stops and resumes
 * later): after an unknown failure the service may have acted, so the
 * attempt stays open and the next run re-sends it with the same key.
 */
export class UnexpectedError extends IbatchError {
  constructor(cause: unknown) {
    super('unexpected', cause instanceof Error ? cause.message : String(cause), EXIT.unreachable, {
      cause,
    });
  }
}

/** System error codes of a file operation that say the local disk or path is at fault. */
const LOCAL_FILE_CODES: Readonly<Record<string, string>> = {
  ENOTDIR: 'a part of the path is a file, not a folder',
  EISDIR: 'it is a folder',
  EEXIST: 'something else is already there',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'the file system is read-only',
  ELOOP: 'too many links',
  ENAMETOOLONG: 'the name is too long',
  ENOENT: 'it does not exist',
};

/**
 * A file or folder on this machine cannot be read or written (a permission,
 * a file where a folder belongs, a read-only disk): the user fixes it, and
 * retrying without that fixes nothing, so it is neither the network (exit 4)
 * nor a bug. Exit 2; a run it stops resumes once it is fixed.
 */
export class LocalFileError extends IbatchError {
  readonly path: string;
  readonly errno: string;

  constructor(path: string, errno: string, options?: { cause?: unknown }) {
    super(
      'local_file',
      `cannot use ${path}: ${LOCAL_FILE_CODES[errno] ?? 'refused by the system'} (${errno})`,
      EXIT.invalid,
      options,
    );
    this.path = path;
    this.errno = errno;
  }
}

/**
 * `error` as a {@link LocalFileError} when it is a file operation's system
 * error (it names a path; a socket's errors do not), else undefined.
 */
export function asLocalFileError(error: unknown): LocalFileError | undefined {
  if (error instanceof LocalFileError) return error;
  const { code, path } = (error ?? {}) as NodeJS.ErrnoException;
  if (typeof path !== 'string' || code === undefined || !(code in LOCAL_FILE_CODES))
    return undefined;
  return new LocalFileError(path, code, { cause: error });
}

export function isIbatchError(error: unknown): error is IbatchError {
  return error instanceof IbatchError;
}

/**
 * Turns anything thrown into an IbatchError (Temporal's
 * `ensureApplicationFailure`): ours pass through, an abort is an
 * interruption, anything else is an {@link UnexpectedError} (a run's
 * classification keeps a file error in an attempt unknown, so the attempt
 * stays open; only the CLI's last word names it with `asLocalFileError`).
 */
export function ensureIbatchError(error: unknown): IbatchError {
  if (error instanceof IbatchError) return error;
  if (error instanceof Error && error.name === 'AbortError')
    return new InterruptedError(error.message);
  return new UnexpectedError(error);
}
