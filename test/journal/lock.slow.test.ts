import { spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  JournalLinkedError,
  JournalLockedError,
  lockPathFor,
  openJournal,
  withLockSync,
} from '../../src/journal/index.js';
import { acquireLock, LONGEST_LOCK_WAIT_MS } from '../../src/journal/lock.js';
import { WAIT_REPORT_MS } from '../../src/shared/index.js';
import { tempDir, until } from '../helpers/index.js';
import { spawnFixture } from './child.js';

describe('journal lock', () => {
  it('refuses a second opener with the holder pid and a --wait hint; close releases', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const first = await openJournal(path);
    const error = await openJournal(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(JournalLockedError);
    expect((error as JournalLockedError).message).toContain(`process ${process.pid}`);
    expect((error as JournalLockedError).message).toContain('--wait');
    expect((error as JournalLockedError).exitCode).toBe(2);
    first.close();
    expect(existsSync(lockPathFor(path))).toBe(false);
    const second = await openJournal(path);
    second.close();
  });

  it('read-only opens take no lock', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const writer = await openJournal(path);
    writer.createRun({ runId: 'r', jobName: 'j', jobPath: '/j', jobHash: 'h', budget: null });
    const reader = await openJournal(path, { readonly: true });
    expect(reader.getRun('r')?.jobName).toBe('j');
    expect(() => reader.setRunStatus('r', 'completed')).toThrow(/readonly/);
    reader.close();
    writer.close();
  });

  it('a waiting opener gets the journal once the holder closes; a bounded wait gives up', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const first = await openJournal(path);
    await expect(openJournal(path, { wait: 300 })).rejects.toBeInstanceOf(JournalLockedError);
    let sawHolder = false;
    let settled = false;
    const waiting = openJournal(path, { wait: true, onLockWait: () => (sawHolder = true) });
    void waiting.then(() => (settled = true));
    // It is waiting (it saw the holder) and has not got the journal: then the holder closes.
    await until(() => sawHolder, { what: 'the opener to wait for the holder' });
    expect(settled).toBe(false);
    first.close();
    const second = await waiting;
    expect(second.closed).toBe(false);
    second.close();
  });

  it('wait: true on a live holder that never lets go: said at least every WAIT_REPORT_MS, given up at LONGEST_LOCK_WAIT_MS naming the holder', async () => {
    const path = join(tempDir('journal'), 'job.lock');
    const held = await acquireLock(path);
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      const started = Date.now();
      const said: number[] = [];
      const waiting = acquireLock(path, {
        wait: true,
        retryIntervalMs: 2000,
        onWait: () => said.push(Date.now()),
      });
      let gaveUpAt = Number.NaN;
      const outcome = waiting.then(
        () => 'acquired',
        (error: unknown) => {
          gaveUpAt = Date.now();
          return error;
        },
      );
      await vi.advanceTimersByTimeAsync(LONGEST_LOCK_WAIT_MS + 5000);
      const error = await outcome;
      expect(error).toBeInstanceOf(JournalLockedError);
      expect((error as Error).message).toContain(`process ${process.pid}`);
      expect(gaveUpAt - started).toBeGreaterThanOrEqual(LONGEST_LOCK_WAIT_MS - 2000);
      expect(gaveUpAt - started).toBeLessThanOrEqual(LONGEST_LOCK_WAIT_MS);
      expect(said[0]).toBe(started);
      const gaps = [...said, gaveUpAt].slice(1).map((at, i) => at - (said[i] ?? at));
      expect(Math.max(...gaps)).toBeLessThanOrEqual(WAIT_REPORT_MS);
    } finally {
      vi.useRealTimers();
      held.release();
    }
  });

  it('takes over the lock of a SIGKILLed holder and says so', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const holder = spawnFixture('lock-holder.ts', path);
    await holder.waitFor((line) => line === 'locked');
    await expect(openJournal(path)).rejects.toThrow(`process ${holder.process.pid}`);
    await holder.kill9();
    expect(existsSync(lockPathFor(path))).toBe(true); // kill -9 cannot clean up
    const stale: unknown[] = [];
    const journal = await openJournal(path, { onStaleLock: (h) => stale.push(h) });
    expect(stale).toEqual([expect.objectContaining({ pid: holder.process.pid })]);
    expect(JSON.parse(readFileSync(lockPathFor(path), 'utf8'))).toMatchObject({ pid: process.pid });
    journal.close();
  });

  it('respects a lock held on another host', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    mkdirSync(dirname(lockPathFor(path)), { recursive: true });
    writeFileSync(
      lockPathFor(path),
      JSON.stringify({ pid: 1, hostname: `not-${hostname()}`, startedAt: Date.now() }),
    );
    await expect(openJournal(path)).rejects.toThrow(/on not-/);
  });

  it('every spelling of one journal is one lock: symlink, x/../, relative; a hard link is refused', async () => {
    const dir = tempDir();
    const path = join(dir, 'db', 'journal.db');
    mkdirSync(join(dir, 'alt'));
    mkdirSync(join(dir, 'x'));
    // The symlink is made before the journal exists: the first opener creates its target.
    symlinkSync(path, join(dir, 'alt', 'journal.db'));
    const first = await openJournal(join(dir, 'alt', 'journal.db'), { job: 'j' });
    expect(existsSync(path)).toBe(true);
    for (const spelling of [
      path,
      join(dir, 'x', '..', 'db', 'journal.db'),
      relative(process.cwd(), path),
    ]) {
      await expect(openJournal(spelling, { job: 'j' })).rejects.toBeInstanceOf(JournalLockedError);
      expect(lockPathFor(spelling, 'j')).toBe(lockPathFor(path, 'j'));
    }
    linkSync(path, join(dir, 'hard.db'));
    await expect(openJournal(join(dir, 'hard.db'), { job: 'j' })).rejects.toBeInstanceOf(
      JournalLinkedError,
    );
    first.close();
  });

  it('locks are per job: another job opens the same journal at once and both write', async () => {
    const path = join(tempDir(), 'journal.db');
    const a = await openJournal(path, { job: 'a' });
    const b = await openJournal(path, { job: 'b' });
    await expect(openJournal(path, { job: 'a' })).rejects.toThrow(/The job "a" is being run/);
    a.createRun({ runId: 'ra', jobName: 'a', jobPath: '/a', jobHash: 'h', budget: null });
    b.createRun({ runId: 'rb', jobName: 'b', jobPath: '/b', jobHash: 'h', budget: null });
    expect(
      a
        .listRuns()
        .map((r) => r.runId)
        .sort(),
    ).toEqual(['ra', 'rb']);
    a.close();
    b.close();
  });

  it('two processes migrating one fresh journal at once both succeed', async () => {
    const path = join(tempDir(), 'journal.db');
    const children = ['a', 'b', 'c'].map((job) => spawnFixture('lock-holder.ts', path, job));
    await Promise.all(children.map((child) => child.waitFor((line) => line === 'locked')));
    for (const child of children) await child.kill9();
    const journal = await openJournal(path, { readonly: true });
    expect(journal.integrityCheck()).toEqual(['ok']);
    journal.close();
  });
});

describe('withLockSync (a short critical section: the manifest lock)', () => {
  const refuse = (holder: { pid: number } | undefined) => new Error(`held by ${holder?.pid}`);

  it('holds the lock only while its section runs, taking over a holder that is gone', () => {
    const lock = join(tempDir('lock-sync'), 'x.lock');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(lock, JSON.stringify({ pid: gone, hostname: hostname(), startedAt: Date.now() }));
    const seen = withLockSync(lock, () => JSON.parse(readFileSync(lock, 'utf8')) as unknown, {
      waitMs: 1000,
      refuse,
    });
    expect(seen).toMatchObject({ pid: process.pid });
    expect(existsSync(lock)).toBe(false);
  });

  it('waits a bounded time for a live holder, then throws its refusal', () => {
    const lock = join(tempDir('lock-sync'), 'x.lock');
    writeFileSync(lock, JSON.stringify({ pid: 1, hostname: `not-${hostname()}`, startedAt: 0 }));
    let ran = false;
    expect(() =>
      withLockSync(
        lock,
        () => {
          ran = true;
        },
        { waitMs: 50, refuse },
      ),
    ).toThrow('held by 1');
    expect(ran).toBe(false);
    expect(existsSync(lock)).toBe(true);
  });

  it('tells onWait who holds it while the log is quiet, then goes on once the holder lets go', () => {
    const lock = join(tempDir('lock-sync'), 'x.lock');
    // A live holder on this host that removes its lock after the log has been quiet long enough.
    const holder = spawn('sh', ['-c', `sleep ${(WAIT_REPORT_MS + 1500) / 1000}; rm -f "${lock}"`], {
      stdio: 'ignore',
    });
    writeFileSync(
      lock,
      JSON.stringify({ pid: holder.pid, hostname: hostname(), startedAt: Date.now() }),
    );
    const told: { pid: number | undefined; waitedMs: number }[] = [];
    const ran = withLockSync(lock, () => true, {
      waitMs: 60_000,
      refuse,
      onWait: (current, waitedMs) => told.push({ pid: current?.pid, waitedMs }),
    });
    expect(ran).toBe(true);
    expect(told.length).toBeGreaterThanOrEqual(1);
    expect(told[0]?.pid).toBe(holder.pid);
    expect(told[0]?.waitedMs).toBeLessThanOrEqual(WAIT_REPORT_MS);
  }, 30_000);

  it("taking over a dead holder removes the temp files dead writers on this host left, not a live one's", () => {
    const folder = tempDir('lock-sync');
    const lock = join(folder, 'x.lock');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(lock, JSON.stringify({ pid: gone, hostname: hostname(), startedAt: Date.now() }));
    const deadTemp = join(folder, `.x.lock.${hostname()}.${gone}.0badcafe.tmp`);
    const liveTemp = join(folder, `.x.lock.${hostname()}.${process.pid}.0badcafe.tmp`);
    const otherHostTemp = join(folder, `.x.lock.not-${hostname()}.${gone}.0badcafe.tmp`);
    for (const file of [deadTemp, liveTemp, otherHostTemp]) writeFileSync(file, '{}');
    withLockSync(lock, () => undefined, { waitMs: 1000, refuse });
    expect(existsSync(deadTemp)).toBe(false);
    expect(existsSync(liveTemp)).toBe(true);
    expect(existsSync(otherHostTemp)).toBe(true);
  });
});
