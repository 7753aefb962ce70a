/**
 * Journals for journal tests, closed after each test (their temp dirs come
 * from the kit), on either store: a test file wraps its tests in
 * `onEachStore` and every `tempJournal` inside opens the store being run.
 */
import { join } from 'node:path';
import { beforeAll, beforeEach, describe } from 'vitest';
import {
  idempotencyKey,
  type Journal,
  type OpenJournalOptions,
  openJournal,
} from '../../src/journal/index.js';
import { defer, tempDir } from '../helpers/index.js';
import { postgresMissing, type RunningPostgres, startPostgres } from '../helpers/postgres.js';

export type StoreName = 'sqlite' | 'postgres';

/** A write a unique key refused, in each store's words (SQLite's, PostgreSQL's). */
export const UNIQUE_VIOLATION =
  /UNIQUE constraint failed|duplicate key value violates unique constraint/;
let currentStore: StoreName = 'sqlite';
let server: RunningPostgres | undefined;

/**
 * Defines the tests of `body` once per store: a SQLite file and a schema of
 * a real PostgreSQL (one server per test file, a schema per journal). The
 * PostgreSQL ones are skipped, saying why, where its binaries are missing.
 */
/**
 * `npm run test:fast` starts no server processes (vitest.fast.config.ts sets
 * IBATCH_TEST_NO_SERVERS): the PostgreSQL half of each store test is left to
 * `npm test`, shown as skipped with this reason.
 */
function serversLeftOut(): string | false {
  return process.env.IBATCH_TEST_NO_SERVERS === '1'
    ? 'test:fast starts no servers; npm test runs it'
    : false;
}

export function onEachStore(body: (store: StoreName) => void): void {
  for (const store of ['sqlite', 'postgres'] as const) {
    const skip = store === 'postgres' ? postgresMissing || serversLeftOut() : false;
    describe.skipIf(skip)(skip ? `${store} store (skipped: ${skip})` : `${store} store`, () => {
      beforeAll(async () => {
        if (store !== 'postgres' || server) return;
        server = await startPostgres();
        // Readers reopen a journal by its name, which never holds the password.
        process.env.PGPASSWORD = server.password;
      });
      beforeEach(() => {
        currentStore = store;
      });
      body(store);
    });
  }
}

/** A new, empty journal's address on the store being run: a file path or a postgres:// URL. */
export async function tempJournalPath(): Promise<string> {
  if (currentStore === 'postgres' && server) return server.newSchema();
  return join(tempDir('journal'), 'nested', 'journal.db');
}

/** Opens a journal that is closed after the test. */
export async function tempJournal(
  options: OpenJournalOptions = {},
  path?: string,
): Promise<Journal> {
  const journal = await openJournal(path ?? (await tempJournalPath()), options);
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
