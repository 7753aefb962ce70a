/**
 * Why a delivery stopped. Either way nothing local is touched and the run's
 * items and files stay as they are: what was not sent is sent by the next
 * `ibatch deliver JOB.yaml` or `ibatch run JOB.yaml` (the journal and the
 * objects' sha256 say what is already there).
 */
import { EXIT, IbatchError } from '../shared/index.js';

export const DELIVERY_ERROR_CODES = {
  unreachable: 'delivery_unreachable',
  refused: 'delivery_refused',
} as const;

/** The store could not be reached or kept failing (network, 5xx): exit 4, resumable. */
export class DeliveryUnreachableError extends IbatchError {
  constructor(message: string, cause?: unknown) {
    super(DELIVERY_ERROR_CODES.unreachable, message, EXIT.unreachable, { cause, retryable: true });
  }
}

/**
 * The store refused us: no or wrong credentials, no permission, no such
 * bucket. Exit 5 like a refused API key: the fix is the configuration, then
 * the same command resumes.
 */
export class DeliveryRefusedError extends IbatchError {
  constructor(message: string, cause?: unknown) {
    super(DELIVERY_ERROR_CODES.refused, message, EXIT.unauthorized, { cause });
  }
}
