/**
 * How to read a generation or training status without trusting its status
 * string: the reference leaves the vocabulary "not shown" and its own samples
 * disagree on case (`success` vs `Success`). The booleans decide.
 */
import type { GenerationStatus, TrainingJob } from './schemas.js';

export const OUTCOMES = {
  pending: 'pending',
  succeeded: 'succeeded',
  failed: 'failed',
  blocked: 'blocked',
} as const;
export type Outcome = (typeof OUTCOMES)[keyof typeof OUTCOMES];

/** Output URLs of a generation, whichever field carries them. */
export function outputUrls(status: Pick<GenerationStatus, 'url' | 'urls'>): string[] {
  const urls = (status.urls ?? []).filter((u) => typeof u === 'string' && u.length > 0);
  if (urls.length > 0) return urls;
  return typeof status.url === 'string' && status.url.length > 0 ? [status.url] : [];
}

/**
 * pending: not terminal yet. failed: terminal and refunded (or terminal, not
 * ready, with an error). blocked: terminal, charged, no output (the safety
 * block of the reference). succeeded: ready with at least one output.
 */
export function generationOutcome(status: GenerationStatus): Outcome {
  if (!status.terminal) return OUTCOMES.pending;
  if (status.refunded) return OUTCOMES.failed;
  const hasOutput = outputUrls(status).length > 0;
  if (status.ready && hasOutput) return OUTCOMES.succeeded;
  if (!hasOutput && isSafetyStatus(status)) return OUTCOMES.blocked;
  if (!hasOutput && status.ready) return OUTCOMES.blocked;
  return OUTCOMES.failed;
}

export function trainingOutcome(job: TrainingJob): Outcome {
  if (!job.terminal) return OUTCOMES.pending;
  if (job.ready) return OUTCOMES.succeeded;
  return OUTCOMES.failed;
}

const SAFETY_WORDS = /(safety|blocked|nsfw|moderat|content[_ -]?policy)/i;

function isSafetyStatus(status: GenerationStatus): boolean {
  return SAFETY_WORDS.test(status.status) || SAFETY_WORDS.test(status.error ?? '');
}
