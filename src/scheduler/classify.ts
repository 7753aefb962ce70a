/**
 * What an error from a service call means for the run: stop everything (and
 * why), or give up on this one item only. The error says so itself
 * (`IbatchError.stopReason`, set from the failure table in
 * contract/failure-meaning.ts); this only adds the run's own interruption.
 */
import { ApiError } from '../api/index.js';
import { ensureIbatchError, isIbatchError } from '../shared/index.js';
import type { StopReason } from './stop-control.js';

export type ErrorVerdict =
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly message: string }
  | { readonly kind: 'item'; readonly message: string; readonly status?: number };

export function classifyError(error: unknown, hardStop: AbortSignal): ErrorVerdict {
  const message = messageOf(error);
  if (hardStop.aborted) return { kind: 'stop', reason: 'interrupted', message };
  // Unknown errors (network faults the transport could not name, bugs) stop
  // the run as unreachable: the service may have acted, so the attempt stays
  // open and the next run re-sends it with the same key.
  const reason = ensureIbatchError(error).stopReason;
  if (reason !== null) return { kind: 'stop', reason, message };
  return error instanceof ApiError
    ? { kind: 'item', message, status: error.status }
    : { kind: 'item', message };
}

export function messageOf(error: unknown): string {
  if (isIbatchError(error) || error instanceof Error) return error.message;
  return String(error);
}
