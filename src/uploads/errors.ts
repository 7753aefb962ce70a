/** Typed errors of the uploads module. */
import { EXIT, IbatchError } from '../shared/index.js';

/** A local file cannot be uploaded (too big, empty, wrong type): nothing was sent. */
export class UploadRejectedError extends IbatchError {
  readonly path: string;
  constructor(path: string, message: string) {
    super('upload_rejected', message, EXIT.invalid);
    this.path = path;
  }
}

/** An upload set is wrong before any file is read (a glob matching nothing). */
export class UploadInputError extends IbatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('upload_input', message, EXIT.invalid, options);
  }
}

/**
 * A presigned upload URL expired before (or while) the PUT could use it. Throw
 * it from a `PutFn` that could not start before `expiresAt`; `uploadWithPresign`
 * then asks for a new presign. Raised to the caller once the attempts run out
 * (resumable, like other service trouble).
 */
export class PresignExpiredError extends IbatchError {
  constructor(message = 'the presigned upload URL expired before the upload could finish') {
    super('presign_expired', message, EXIT.unreachable);
  }
}
