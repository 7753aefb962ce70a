/**
 * Why a delivery stopped. Whatever the reason nothing local is touched and
 * the run's items and files stay as they are: what was not sent is sent by
 * the next `ibatch deliver JOB.yaml` or `ibatch run JOB.yaml` (the journal
 * and the objects' sha256 say what is already there), once the store answers,
 * its configuration is fixed, or (a conflict) the destination is another.
 * All exit 4 with the stop reason `delivery`: exit 5 is the service refusing
 * the API key, and a store refusing its own credentials is not that.
 */
import { EXIT, IbatchError } from '../shared/index.js';

export const DELIVERY_ERROR_CODES = {
  unreachable: 'delivery_unreachable',
  refused: 'delivery_refused',
  conflict: 'delivery_conflict',
} as const;

/** How far a delivery got before it stopped (for the run's report and notification). */
export interface DeliveryProgress {
  /** `s3://bucket/prefix`. */
  readonly destination: string;
  /** Objects the delivery had to make present. */
  readonly objects: number;
  /** Objects sent before it stopped. */
  readonly sent: number;
  /** Objects already there with the same sha256. */
  readonly unchanged: number;
}

/** Any delivery failure: exit 4, stop reason `delivery`, with how far it got. */
export abstract class DeliveryError extends IbatchError {
  /** Set once the delivery knows its objects (not for a store that failed to open). */
  readonly progress: DeliveryProgress | undefined;

  constructor(
    code: string,
    message: string,
    retryable: boolean,
    cause: unknown,
    progress: DeliveryProgress | undefined,
  ) {
    super(code, message, EXIT.unreachable, { cause, retryable, stopReason: 'delivery' });
    this.progress = progress;
  }
}

/** The store could not be reached or kept failing (network, 5xx, 408, 429). */
export class DeliveryUnreachableError extends DeliveryError {
  constructor(message: string, cause?: unknown, progress?: DeliveryProgress) {
    super(DELIVERY_ERROR_CODES.unreachable, message, true, cause, progress);
  }
}

/**
 * The store refused us: no or wrong credentials, no permission, no such
 * bucket. The fix is the configuration, then the same command resumes.
 */
export class DeliveryRefusedError extends DeliveryError {
  constructor(message: string, cause?: unknown, progress?: DeliveryProgress) {
    super(DELIVERY_ERROR_CODES.refused, message, false, cause, progress);
  }
}

/**
 * Another job's delivered output is at a key this delivery would write: the
 * two jobs' outputs would overwrite each other under one prefix. Nothing was
 * sent; the fix is the destination (a prefix per job) or the file names.
 */
export class DeliveryConflictError extends DeliveryError {
  constructor(message: string, progress?: DeliveryProgress) {
    super(DELIVERY_ERROR_CODES.conflict, message, false, undefined, progress);
  }
}
