/**
 * Disk and journal failures: real `ibatch` processes
 * (`node bin/ibatch.js`, needs `npm run build`) on real journal files, against
 * a real emulator over HTTP. A journal that cannot be written ends with its
 * own message (what failed, the path, that nothing was lost, how to resume),
 * a documented exit code and a correct status; nothing is charged that the
 * journal does not know; once the fault is gone the resume charges each item
 * once.
 *
 * Permissions do not stop root, so a root test runner runs the CLI as
 * `nobody` (its workspace handed over to it) and the read-only cases stay
 * real. A full disk is `IBATCH_JOURNAL_FULL_AFTER` (src/journal/full-disk-hook.ts):
 * SQLite's own SQLITE_FULL after the journal grew by N pages.
 */
import { chmodSync, chownSync, copyFileSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { LedgerEntry, RunningEmulator } from '../../src/emulator/index.js';
import {
  type CliResult,
  expectNoStack,
  said,
  spawnCli,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const NOBODY = 65534;
/** Who runs the CLI: ourselves, or `nobody` when we are root (whom chmod does not stop). */
const USER = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : undefined;
const RESUME = 'run the same command again';

/** A workspace the CLI's user owns. */
function ownWorkspace(yaml: string): Workspace {
  const ws = workspace(yaml);
  if (USER) chownSync(ws.dir, USER.uid, USER.gid);
  return ws;
}

async function ibatch(
  ws: Workspace,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<CliResult> {
  const run = spawnCli(args, { cwd: ws.dir, env, ...(USER ? { user: USER } : {}) });
  const exit = await run.exited;
  return { code: exit.code ?? -1, stdout: exit.stdout, stderr: exit.stderr };
}

/** `ibatch status --json` as the CLI's user (a root reader could leave root-owned -shm files). */
async function statusOf(ws: Workspace, journal?: string): Promise<string> {
  const extra = journal ? ['--journal', journal] : [];
  const result = await ibatch(ws, ['status', ws.jobPath, '--json', ...extra], {});
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { run: { status: string } }).run.status;
}

/** Every charge carries an idempotency key the journal recorded before sending it. */
function expectChargesKnown(entries: readonly LedgerEntry[], journalPath: string): void {
  // A copy: a reader here (root) would leave -shm/-wal files the CLI's user cannot write.
  const copy = path.join(tempDir('journal-copy'), 'journal.db');
  for (const suffix of ['', '-wal']) {
    if (existsSync(journalPath + suffix)) copyFileSync(journalPath + suffix, copy + suffix);
  }
  const db = new Database(copy, { readonly: true });
  try {
    const known = new Set(db.prepare('SELECT idempotency_key FROM attempts').pluck().all());
    for (const entry of entries) expect(known.has(entry.idempotencyKey)).toBe(true);
  } finally {
    db.close();
  }
}

/** A first run stopped by its budget (5 of 20 items charged): a journal with a run to resume. */
async function partialRun(e: RunningEmulator, name: string): Promise<Workspace> {
  const ws = ownWorkspace(imageJob({ name, n: 20, budget: 10 }));
  const first = await ibatch(ws, ['run', ws.jobPath], envFor(e, SCALE));
  expect(first.code, first.stderr).toBe(3);
  expect(await charges(e)).toHaveLength(5);
  return ws;
}

/** Lifts the budget and resumes: exit 0, each of the 20 items charged once. */
async function resumeCompletes(e: RunningEmulator, ws: Workspace, name: string): Promise<void> {
  ws.write(imageJob({ name, n: 20 }));
  const again = await ibatch(ws, ['run', ws.jobPath], envFor(e, SCALE));
  expect(again.code, again.stderr).toBe(0);
  expect(await statusOf(ws)).toBe('completed');
  expectOneChargePerItem(await charges(e), 20);
}

describe('disk and journal failures', () => {
  it('the journal disk fills mid-run: exit 4 with the path and the resume, stopped_error; freed, the resume charges each item once', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = ownWorkspace(imageJob({ name: 'full-job', n: 20 }));
    const env = envFor(e, SCALE);
    const full = await ibatch(ws, ['run', ws.jobPath], { ...env, IBATCH_JOURNAL_FULL_AFTER: '3' });
    expect(full.code, full.stderr).toBe(4);
    expectNoStack(full.stderr);
    const text = said(full);
    expect(text).toContain(`The journal ${ws.journalPath} could not be written: the disk is full`);
    expect(text).toContain('Nothing was lost');
    expect(text).toContain(`Free space on the disk that holds ${path.dirname(ws.journalPath)}`);
    expect(text).toContain(`${RESUME} to resume`);
    const spent = await charges(e);
    expect(spent.length, 'the disk filled after some charges').toBeGreaterThan(0);
    expect(spent.length).toBeLessThan(20);
    expectChargesKnown(spent, ws.journalPath);
    expect(await statusOf(ws)).toBe('stopped_error');

    const again = await ibatch(ws, ['run', ws.jobPath], env);
    expect(again.code, again.stderr).toBe(0);
    expectOneChargePerItem(await charges(e), 20);
  }, 90_000);

  it('a read-only journal file: exit 2 before anything is sent; writable again, the resume charges each item once', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = await partialRun(e, 'ro-file');
    chmodSync(ws.journalPath, 0o444);
    ws.write(imageJob({ name: 'ro-file', n: 20 }));
    const ro = await ibatch(ws, ['run', ws.jobPath], envFor(e, SCALE));
    expect(ro.code, ro.stderr).toBe(2);
    expectNoStack(ro.stderr);
    const text = said(ro);
    expect(text).toContain(`Cannot write the journal ${ws.journalPath}: it is read-only`);
    expect(text).toContain('Nothing was sent to the service');
    expect(text).toContain(`Make ${ws.journalPath} and its folder`);
    expect(text).toContain(RESUME);
    expect(await charges(e)).toHaveLength(5);
    expectChargesKnown(await charges(e), ws.journalPath);

    chmodSync(ws.journalPath, 0o644);
    await resumeCompletes(e, ws, 'ro-file');
  }, 90_000);

  it('a read-only journal folder: exit 2 before anything is sent; writable again, the resume charges each item once', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = await partialRun(e, 'ro-folder');
    const folder = path.dirname(ws.journalPath);
    chmodSync(folder, 0o555);
    ws.write(imageJob({ name: 'ro-folder', n: 20 }));
    const ro = await ibatch(ws, ['run', ws.jobPath], envFor(e, SCALE));
    chmodSync(folder, 0o755);
    expect(ro.code, ro.stderr).toBe(2);
    expectNoStack(ro.stderr);
    const text = said(ro);
    expect(text).toContain(`Cannot write the journal ${ws.journalPath}: it is read-only`);
    expect(text).toContain(`its folder ${folder} writable`);
    expect(text).toContain(RESUME);
    expect(await charges(e)).toHaveLength(5);

    await resumeCompletes(e, ws, 'ro-folder');
  }, 90_000);

  it('a journal path through a file (ENOTDIR): exit 2, nothing sent; with the path fixed the run charges each item once', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = ownWorkspace(imageJob({ name: 'notdir', n: 3 }));
    const blocker = path.join(ws.dir, 'state');
    writeFileSync(blocker, 'a file, not a folder\n');
    if (USER) chownSync(blocker, USER.uid, USER.gid);
    const journal = path.join(blocker, 'journal.db');
    const args = ['run', ws.jobPath, '--journal', journal];
    const bad = await ibatch(ws, args, envFor(e, SCALE));
    expect(bad.code, bad.stderr).toBe(2);
    expectNoStack(bad.stderr);
    const text = said(bad);
    expect(text).toContain(`Cannot write the journal ${journal}: it cannot be opened`);
    expect(text).toContain(`Make sure ${blocker} is a folder`);
    expect(await charges(e)).toHaveLength(0);

    rmSync(blocker);
    const again = await ibatch(ws, args, envFor(e, SCALE));
    expect(again.code, again.stderr).toBe(0);
    expect(await statusOf(ws, journal)).toBe('completed');
    expectOneChargePerItem(await charges(e), 3);
  }, 60_000);
});
