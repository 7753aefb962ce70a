import { realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  folderOwner,
  OutputFolderLockedError,
  OutputFolderLocks,
} from '../../src/scheduler/output-folder-lock.js';
import { silentLogger, thisMachine } from '../../src/shared/index.js';
import { tempDir } from '../helpers/index.js';

function locks(dir: string, job: string, journal: string): OutputFolderLocks {
  const journalPath = path.join(dir, journal);
  writeFileSync(journalPath, '');
  return new OutputFolderLocks({ job, journalPath, wait: false, logger: silentLogger() });
}

describe('the output folder lock of a job', () => {
  it('refuses the same job with another journal, naming its holder; other jobs share the folder', async () => {
    const dir = tempDir('folder-lock');
    const out = path.join(dir, 'out');
    const a = locks(dir, 'job', 'jA.db');
    await a.hold(out);
    // Another job in the same folder runs meanwhile.
    const other = locks(dir, 'other-job', 'jB.db');
    await other.hold(out);

    // Another spelling of the folder (a link to it) is the same lock.
    symlinkSync(out, path.join(dir, 'link'));
    const error = await locks(dir, 'job', 'jB.db')
      .hold(path.join(dir, 'link'))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputFolderLockedError);
    const { message, exitCode } = error as OutputFolderLockedError;
    expect(exitCode).toBe(2);
    expect(message).toContain(`process ${process.pid} on ${hostname()}`);
    expect(message).toContain(`with the journal ${realpathSync(path.join(dir, 'jA.db'))}`);
    expect(message).toContain('--wait');

    a.release();
    other.release();
    const b = locks(dir, 'job', 'jB.db');
    await b.hold(out);
    b.release();
  });

  it("records the journal that owns the job's rows, and hands it over", async () => {
    const dir = tempDir('folder-lock');
    const out = path.join(dir, 'out');
    expect(folderOwner(out, 'job')).toBeUndefined();
    const a = locks(dir, 'job', 'jA.db');
    await a.hold(out);
    a.release();
    expect(folderOwner(out, 'job')).toMatchObject({
      job: 'job',
      journal: realpathSync(path.join(dir, 'jA.db')),
      hostname: thisMachine(),
    });
    const b = locks(dir, 'job', 'jB.db');
    await b.hold(out);
    b.release();
    expect(folderOwner(out, 'job')?.journal).toBe(realpathSync(path.join(dir, 'jB.db')));
    expect(folderOwner(out, 'other-job')).toBeUndefined();
  });
});
