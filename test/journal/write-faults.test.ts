/**
 * The journal's disk failing at the journal's own surface: a
 * `JournalWriteError` naming the journal, remembered as the journal's first
 * fault and told once; a refusal at open. The CLI's side (messages, exit
 * codes, resumes) is test/cli/disk-faults.slow.test.ts.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { JournalWriteError, openJournal } from '../../src/journal/index.js';
import { tempDir } from '../helpers/index.js';
import { seedRun, tempJournal } from './helpers.js';

afterEach(() => {
  vi.unstubAllEnvs();
});

describe('journal write faults', () => {
  it('a full disk mid-run: JournalWriteError (exit 4), remembered and told once; earlier commits stand', async () => {
    vi.stubEnv('IBATCH_JOURNAL_FULL_AFTER', '1');
    const journal = await tempJournal();
    const runId = seedRun(journal);
    const told: JournalWriteError[] = [];
    journal.onFault((fault) => told.push(fault));
    const big = 'x'.repeat(2000);
    const failures: unknown[] = [];
    for (let i = 0; i < 20; i++) {
      try {
        journal.appendEvent(runId, { type: 'note', message: `${i} ${big}`, itemKey: null });
      } catch (error) {
        failures.push(error);
      }
    }
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((e) => e instanceof JournalWriteError)).toBe(true);
    const fault = failures[0] as JournalWriteError;
    expect(fault).toMatchObject({ code: 'journal_unwritable', kind: 'full', phase: 'run' });
    expect(fault.exitCode).toBe(4);
    expect(fault.message).toContain(`The journal ${journal.path} could not be written`);
    expect(journal.fault).toBe(fault);
    expect(told).toEqual([fault]);
    // What was committed before the disk filled is still there.
    expect(journal.getRun(runId)?.runId).toBe(runId);
    expect(journal.listEvents(runId).length).toBe(20 - failures.length);
  });

  it('a journal path through a file: JournalWriteError at open (exit 2), nothing created', async () => {
    const dir = tempDir('journal');
    writeFileSync(join(dir, 'state'), 'a file\n');
    const path = join(dir, 'state', 'journal.db');
    const error = await openJournal(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalWriteError);
    expect(error).toMatchObject({ kind: 'cannot-open', phase: 'open', exitCode: 2, path });
  });

  it('refuses a malformed IBATCH_JOURNAL_FULL_AFTER (a typo must not test nothing)', async () => {
    vi.stubEnv('IBATCH_JOURNAL_FULL_AFTER', 'ten');
    const error = await tempJournal().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'usage', exitCode: 2 });
  });
});
