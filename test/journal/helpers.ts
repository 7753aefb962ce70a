/** Temp dirs and journals for journal tests, removed after each test. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import { type Journal, type OpenJournalOptions, openJournal } from '../../src/journal/index.js';

const cleanups: (() => void)[] = [];

afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-journal-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Opens a journal that is closed after the test (fails the test if left open is impossible). */
export async function tempJournal(
  options: OpenJournalOptions = {},
  path = join(tempDir(), 'nested', 'journal.db'),
): Promise<Journal> {
  const journal = await openJournal(path, options);
  cleanups.push(() => journal.close());
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
