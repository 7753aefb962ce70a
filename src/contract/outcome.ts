/**
 * How to read a generation or training status without trusting its status
 * string: the reference leaves the vocabulary "not shown" and its own samples
 * disagree on case (`success` vs `Success`). The booleans decide.
 */
import type { GenerationHistory, GenerationStatus, Kind, TrainingJob } from './schemas.js';

type HistoryEntry = GenerationHistory['generations'][number];

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

/** History statuses that certainly mean "not finished yet". */
const PENDING_STATUSES = new Set([
  'queued',
  'pending',
  'processing',
  'running',
  'in_progress',
  'in-progress',
  'starting',
  'started',
  'submitted',
]);

/**
 * Whether a history entry may show a finished generation: anything but a
 * known in-flight status, or any entry with an output URL. Only these are
 * worth a read by id.
 */
export function historyMayBeDone(entry: HistoryEntry): boolean {
  return !PENDING_STATUSES.has(entry.status.trim().toLowerCase()) || Boolean(entry.url);
}

/**
 * The status a history entry proves on its own, for a generation that
 * carries its item's only output; undefined when only a read by id can tell
 * (docs/polling.md). Proof is the reference's success status (`success` /
 * `Success`, any case, but no other spelling) together with an output URL:
 * the reference says a success is ready, terminal and not refunded, a
 * safety-blocked generation has no URL, and a failure is refunded "together
 * with its terminal status", never a success. The history entry has no
 * `urls`, `creditsCost` or `error`; none is needed (the charge is known from
 * the create), so none is invented here.
 */
export function settledFromHistory(kind: Kind, entry: HistoryEntry): GenerationStatus | undefined {
  if (entry.status.trim().toLowerCase() !== 'success') return undefined;
  const url = typeof entry.url === 'string' ? entry.url : '';
  if (url.length === 0) return undefined;
  return {
    id: entry.id,
    kind,
    status: entry.status,
    ready: true,
    terminal: true,
    refunded: false,
    ...(kind === 'video' ? { url } : { urls: [url] }),
    error: null,
  };
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
