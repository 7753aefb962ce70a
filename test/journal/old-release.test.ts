/**
 * A journal written by an old release (test/journal/fixtures/old-release,
 * see its README) must resume with the current code exactly as it would have
 * with the old one: the stored idempotency keys, item keys, request hashes
 * and contract hashes are what the current code computes, and the attempt
 * that was journaled but never sent goes out with its stored key (so a
 * service that did see it would deduplicate it instead of charging twice).
 */
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClient } from '../../src/api/index.js';
import { validateJob } from '../../src/job/index.js';
import { type AttemptRecord, idempotencyKey, openJournal } from '../../src/journal/index.js';
import { prepareJobFiles } from '../../src/scheduler/decide/input-files.js';
import { itemIdentity } from '../../src/scheduler/decide/item-identity.js';
import { toNewItem } from '../../src/scheduler/decide/item-records.js';
import { accountFingerprint, contentHash } from '../../src/shared/index.js';
import { repoPath, runCliCaptured, tempDir, testEmulator } from '../helpers/index.js';
import { charges, envFor } from '../scheduler/helpers.js';

const FIXTURE = repoPath('test', 'journal', 'fixtures', 'old-release');
const facts = JSON.parse(readFileSync(path.join(FIXTURE, 'facts.json'), 'utf8')) as {
  runId: string;
  emulatorSeed: number;
  timeScale: number;
  apiKey: string;
  accountFingerprint: string;
};

/** A copy of the fixture laid out as a job folder: job.yaml, out/, .ibatch/journal.db. */
function copyFixture(): { dir: string; jobPath: string; journalPath: string } {
  const dir = tempDir('journal');
  cpSync(path.join(FIXTURE, 'job.yaml'), path.join(dir, 'job.yaml'));
  cpSync(path.join(FIXTURE, 'out'), path.join(dir, 'out'), { recursive: true });
  mkdirSync(path.join(dir, '.ibatch'));
  cpSync(path.join(FIXTURE, 'journal.db'), path.join(dir, '.ibatch', 'journal.db'));
  return {
    dir,
    jobPath: path.join(dir, 'job.yaml'),
    journalPath: path.join(dir, '.ibatch', 'journal.db'),
  };
}

async function readStored(journalPath: string) {
  const journal = await openJournal(journalPath);
  try {
    const run = journal.getRun(facts.runId);
    const items = journal.listItems(facts.runId);
    const attempts = items.flatMap((i) => journal.listAttempts(facts.runId, i.itemKey));
    return { run, items, attempts };
  } finally {
    journal.close();
  }
}

describe('a journal written by release 0c8bfc1', () => {
  it('resumes with the stored keys and hashes, re-sending the open attempt with its key', async () => {
    const ws = copyFixture();
    const before = await readStored(ws.journalPath);
    expect(before.run?.status).toBe('running');
    const open = before.attempts.filter((a) => a.state === 'intent');
    expect(open.map((a) => a.itemKey)).toEqual(['s4-ccedc0c8ce']);
    const done = before.attempts.filter((a) => a.state === 'succeeded');
    expect(done).toHaveLength(3);

    const em = await testEmulator({ seed: facts.emulatorSeed, timeScale: facts.timeScale });
    const apiKey = em.accounts[0]?.apiKey ?? '';
    expect(apiKey).toBe(facts.apiKey);
    expect(accountFingerprint(apiKey)).toBe(facts.accountFingerprint);

    // `--run-id` resumes the named run whatever service it last talked to
    // (docs/ci.md): the old emulator's port is gone.
    const result = await runCliCaptured(
      ['run', ws.jobPath, '--run-id', facts.runId],
      envFor(em, facts.timeScale),
      ws.dir,
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('resumed run old-1');
    // The emulator's sdxl-lite contract gained bounds (maxLength, integer,
    // exclude) after this journal was written, so the resume says so; the
    // hash itself is checked against the old contract in the next test.
    expect(result.stderr).toContain(
      'the contract of model sdxl-lite changed since this run started',
    );

    const ledger = await charges(em);
    const sentKeys = ledger.map((e) => e.idempotencyKey);
    // The open attempt went out with exactly its stored key, once.
    expect(sentKeys.filter((k) => k === open[0]?.idempotencyKey)).toHaveLength(1);
    // Nothing that had succeeded was sent again; nothing was charged twice.
    for (const a of done) expect(sentKeys).not.toContain(a.idempotencyKey);
    expect(new Set(sentKeys).size).toBe(sentKeys.length);
    expect(ledger).toHaveLength(3);

    const after = await readStored(ws.journalPath);
    expect(after.items.every((i) => i.state === 'succeeded')).toBe(true);
    const s4 = after.attempts.filter((a) => a.itemKey === 's4-ccedc0c8ce');
    expect(s4.map((a) => [a.attemptNo, a.idempotencyKey, a.requestHash])).toEqual([
      [1, open[0]?.idempotencyKey, open[0]?.requestHash],
    ]);
    // Every key sent is the one the journal holds for that attempt.
    expect(new Set(sentKeys)).toEqual(
      new Set(
        after.attempts
          .map((a) => a.idempotencyKey)
          .filter((k) => !done.some((d) => d.idempotencyKey === k)),
      ),
    );
  });

  it('the current code computes the stored item keys, request hashes and idempotency keys', async () => {
    const ws = copyFixture();
    const stored = await readStored(ws.journalPath);
    const em = await testEmulator({ seed: facts.emulatorSeed, timeScale: facts.timeScale });
    // The model catalog comes from the emulator, like a run's.
    const client = createClient({ baseUrl: em.baseUrl, apiKey: facts.apiKey });
    const { job, items, catalog } = await validateJob(ws.jobPath, {
      lister: client,
      baseUrl: client.baseUrl,
      cacheFile: null,
    }).finally(() => client.close());
    expect(job.name).toBe(stored.run?.jobName);
    const files = await prepareJobFiles(job, items);
    const now = items.map((item) => toNewItem(item, itemIdentity(job, files, item)));
    expect(now.map((i) => [i.itemKey, i.requestHash])).toEqual(
      stored.items.map((i) => [i.itemKey, i.requestHash]),
    );
    const keyOf = (a: AttemptRecord) =>
      idempotencyKey({
        jobName: job.name,
        runId: a.runId,
        stepId: 'shots',
        itemKey: a.itemKey,
        attempt: a.attemptNo,
      });
    expect(stored.attempts.length).toBeGreaterThan(0);
    for (const a of stored.attempts) expect(keyOf(a)).toBe(a.idempotencyKey);
    // The contract hash: the current code hashes the fields the old emulator
    // served (today's, less the bounds added since) to the stored hash.
    const served = (catalog.get('sdxl-lite')?.fields ?? []) as readonly object[];
    const oldFields = served.map((field) => {
      const { maxLength: _l, integer: _i, exclude: _e, ...rest } = field as Record<string, unknown>;
      return rest;
    });
    const storedContracts = (stored.run?.options as { contracts?: Record<string, string> })
      ?.contracts;
    expect(storedContracts?.['sdxl-lite']).toBe(contentHash(oldFields));
    expect(contentHash(served)).not.toBe(storedContracts?.['sdxl-lite']);
  });
});
