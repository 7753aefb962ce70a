/**
 * What an error from a service call means for the run: stop everything (and
 * why), or give up on this one item only.
 */
import { ApiError } from '../api/index.js';
import { isIbatchError } from '../shared/index.js';
import type { StopReason } from './stop-control.js';

export type ErrorVerdict =
  | { readonly kind: 'stop'; readonly reason: StopReason; readonly message: string }
  | { readonly kind: 'item'; readonly message: string; readonly status?: number };

export function classifyError(error: unknown, hardStop: AbortSignal): ErrorVerdict {
  const message = messageOf(error);
  if (hardStop.aborted) return { kind: 'stop', reason: 'interrupted', message };
  if (error instanceof ApiError) {
    if (error.status === 401 || error.status === 403) {
      return { kind: 'stop', reason: 'unauthorized', message };
    }
    if (error.status === 402) return { kind: 'stop', reason: 'credits', message };
    if (error.status === 429 || error.status >= 500) {
      return { kind: 'stop', reason: 'unreachable', message };
    }
    return { kind: 'item', message, status: error.status };
  }
  if (isAbort(error)) return { kind: 'stop', reason: 'interrupted', message };
  // Network faults, timeouts and contract breaks: the service may have acted;
  // the attempt stays open and the next run re-sends it with the same key.
  return { kind: 'stop', reason: 'unreachable', message };
}

export function messageOf(error: unknown): string {
  if (isIbatchError(error) || error instanceof Error) return error.message;
  return String(error);
}

function isAbort(error: unknown): boolean {
  return (
    error instanceof Error && (error.name === 'AbortError' || error.name === 'InterruptedError')
  );
}
