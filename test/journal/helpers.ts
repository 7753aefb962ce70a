/** Journals for journal tests, closed after each test (their temp dirs come from the kit). */
import { join } from 'node:path';
import { type Journal, type OpenJournalOptions, openJournal } from '../../src/journal/index.js';
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
