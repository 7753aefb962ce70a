/** Status strings in the configured case (the reference's samples disagree: `success` vs `Success`). */
import type { StatusCase } from './options.js';

export function inCase(status: string, statusCase: StatusCase): string {
  switch (statusCase) {
    case 'lower':
      return status;
    case 'upper':
      return status.toUpperCase();
    case 'title':
      return status.charAt(0).toUpperCase() + status.slice(1);
    default: {
      const never: never = statusCase;
      return never;
    }
  }
}

/** Odd spellings the `unknown-status` fault serves instead of the real status. */
const ODD: Record<string, string> = {
  queued: 'PENDING',
  processing: 'RUNNING',
  success: 'Succeeded',
  succeeded: 'COMPLETED',
  failed: 'Errored',
  blocked: 'CONTENT_FILTERED',
  training: 'IN_PROGRESS',
  ready: 'Active',
};

export function oddStatus(status: string): string {
  return ODD[status] ?? status.toUpperCase();
}
