/**
 * An id the journal recorded as created (a generation, a training) that the
 * service answers 404 for, read after read. Then this service or account does
 * not know it: the service lost its state (a restart of a stand-in, a
 * disaster), or the base URL or API key now point at another service or
 * account. Waiting longer cannot help, and making the item again may pay a
 * second time (on another account, or for work the service still has), so
 * the run stops (exit 5) and says what to check; `run --forget-lost` is the
 * user's explicit "the service lost them: make them again".
 */
import { ApiError } from '../api/index.js';
import { EXIT, IbatchError } from '../shared/index.js';

/** Reads answering 404 in a row before an id counts as unknown to the service. */
export const NOT_FOUND_READS = 3;

export type RemoteKind = 'generation' | 'training';

export class NotKnownToServiceError extends IbatchError {
  /** What the user does next: the run's final message says it. */
  static readonly NEXT_STEP =
    'If the key or the base URL changed, put back the ones this job was run with and run again to resume. If the service lost these jobs, `ibatch run JOB --forget-lost` records them as lost (their charge stays counted) and makes them again under new keys, paying again';

  constructor(
    readonly remoteKind: RemoteKind,
    readonly remoteId: string,
    reads: number,
  ) {
    super(
      'not_known_to_service',
      `${remoteKind} ${remoteId}, created earlier by this job, is not known to this service or account (404 on ${reads} reads in a row): was the service (base URL) or the API key changed?`,
      EXIT.unauthorized,
    );
  }
}

/** A 404 from the service: the id asked for is not there. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}
