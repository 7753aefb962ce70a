/** Journals for journal tests, closed after each test (their temp dirs come from the kit). */
import { join } from 'node:path';
import {
  idempotencyKey,
  type Journal,
  type OpenJournalOptions,
  openJournal,
} from '../../src/journal/index.js';
import { defer, tempDir } from '../helpers/index.js';

/** Opens a journal that is closed after the test. */
export async function tempJournal(
  options: OpenJournalOptions = {},
  path = join(tempDir('journal'), 'nested', 'journal.db'),
): Promise<Journal> {
  const journal = await openJournal(path, options);
  defer(() => journal.close());
  return journal;
}

export function seedRun(journal: Journal, budget: number | null = null, runId = 'run-1') {
  journal.createRun({
    runId,
    jobName: 'spring',
    jobPath: '/jobs/spring.yaml',
    jobHash: 'h1',
    budget,
  });
  return runId;
}

export function item(key: string, stepId = 'portraits', quotedCost = 10) {
  return {
    itemKey: key,
    stepId,
    kind: 'image',
    modelId: 'img-model',
    request: { prompt: key },
    requestHash: `hash-${key}`,
    quotedCost,
    expectedOutputs: 1,
  };
}

/** The idempotency key of attempt `attempt` of `itemKey` in seedRun's run. */
export const attemptKey = (itemKey: string, attempt = 1) =>
  idempotencyKey({ jobName: 'spring', runId: 'run-1', stepId: 'portraits', itemKey, attempt });

/** Records the intent of an attempt (its key from attemptKey), as the engine does before a create. */
export function intendAttempt(
  journal: Journal,
  runId: string,
  itemKey: string,
  attemptNo = 1,
  quotedCost = 10,
) {
  return journal.recordAttemptIntent({
    runId,
    itemKey,
    attemptNo,
    idempotencyKey: attemptKey(itemKey, attemptNo),
    request: {},
    requestHash: 'h',
    quotedCost,
  });
}

/** Records the service's answer to an attempt's create: charged, with its generation ids. */
export function submitAttempt(
  journal: Journal,
  runId: string,
  itemKey: string,
  attemptNo: number,
  generationIds: string[],
  chargedCost = 10,
): void {
  journal.recordAttemptSubmitted({ runId, itemKey, attemptNo, chargedCost, generationIds });
}

/** Records a failed attempt the service refunded; the item fails with it. */
export function refundAttempt(
  journal: Journal,
  runId: string,
  itemKey: string,
  attemptNo = 1,
): void {
  journal.recordAttemptOutcome({
    runId,
    itemKey,
    attemptNo,
    state: 'failed',
    itemState: 'failed',
    refunded: true,
  });
}
