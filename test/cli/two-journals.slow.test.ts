/**
 * Two journals, one output folder: `run job.yaml --journal jA.db` and
 * `run job.yaml --journal jB.db` work the same job in the same folder. The
 * folder's lock of the job lets one of them run at a time (the other exits 2
 * naming it, or waits with --wait and then adopts its rows), the folder
 * records which journal owns the job's rows, a SIGKILLed holder's lock is
 * taken over, and another job still runs into the folder meanwhile. Real
 * `ibatch run` processes against the emulator, its ledger as the judge.
 * Spawned processes need `npm run build`.
 */
import { existsSync, readdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { lockFileName } from '../../src/journal/index.js';
import { folderOwner, OWNERS_FOLDER } from '../../src/scheduler/output-folder-lock.js';
import {
  jsonLogs,
  manifestRows,
  runCliCaptured,
  type SpawnedCli,
  said,
  spawnCli,
  testEmulator,
  until,
} from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  ledgerNet,
  slowEnv,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const JOB = 'two-journals';
/** sdxl-lite: 2 credits an item, so a budget of 2 * N is exactly the job. */
const N = 20;
const BUDGET = 2 * N;

interface Setup {
  readonly em: RunningEmulator;
  readonly ws: Workspace;
  readonly out: string;
  readonly journalA: string;
  readonly journalB: string;
  readonly lockPath: string;
}

async function setup(): Promise<Setup> {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace(imageJob({ name: JOB, n: N, budget: BUDGET }));
  const out = path.join(ws.dir, 'out');
  return {
    em,
    ws,
    out,
    journalA: path.join(ws.dir, 'jA.db'),
    journalB: path.join(ws.dir, 'jB.db'),
    lockPath: path.join(out, OWNERS_FOLDER, lockFileName(JOB)),
  };
}

const runArgs = (s: Setup, journal: string, ...more: string[]) => [
  'run',
  s.ws.jobPath,
  '--journal',
  journal,
  ...more,
];

/** Every charge is one item's, the job's budget is never passed, and no output got a second name. */
async function expectPaidOnce(s: Setup): Promise<void> {
  expectOneChargePerItem(await charges(s.em), N);
  expect(await ledgerNet(s.em)).toBeLessThanOrEqual(BUDGET);
  // Each image has its provenance sidecar `<file>.json` beside it.
  const images = readdirSync(path.join(s.out, 'shots')).filter((name) => name.endsWith('.png'));
  expect(images.filter((name) => /-[0-9a-f]{8}\.png$/.test(name))).toEqual([]);
  expect(images).toHaveLength(N);
}

/** A slow run with journal A, once it is at work (it has paid for something); `held` keeps it unfinished however long the test takes to act. */
async function startHolder(s: Setup, held = false): Promise<SpawnedCli> {
  const env = held ? heldEnv(s.em, SCALE) : slowEnv(s.em, SCALE);
  const a = spawnCli(runArgs(s, s.journalA), { env, cwd: s.ws.dir });
  await until(async () => (await charges(s.em)).length >= 1, {
    timeoutMs: 20_000,
    what: 'the first run to charge',
  });
  return a;
}

describe('two journals, one output folder', () => {
  it('started together: one runs, the other exits 2 naming it; one charge per item, one name per file', async () => {
    const s = await setup();
    const env = slowEnv(s.em, SCALE);
    const a = spawnCli(runArgs(s, s.journalA), { env, cwd: s.ws.dir });
    const b = spawnCli(runArgs(s, s.journalB), { env, cwd: s.ws.dir });
    const [endA, endB] = await Promise.all([a.exited, b.exited]);
    const ends = [
      { end: endA, journal: s.journalA, pid: a.child.pid },
      { end: endB, journal: s.journalB, pid: b.child.pid },
    ];
    const winner = ends.find((e) => e.end.code === 0);
    const loser = ends.find((e) => e.end.code === 2);
    expect(winner, `${endA.stderr}\n${endB.stderr}`).toBeDefined();
    expect(loser, `${endA.stderr}\n${endB.stderr}`).toBeDefined();
    const refusal = loser?.end.stderr ?? '';
    expect(refusal).toContain(`process ${winner?.pid} on ${hostname()}`);
    expect(refusal).toContain(`with the journal ${realpathSync(winner?.journal ?? '')}`);
    expect(refusal).toMatch(/since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d/);
    expect(refusal).toContain('--wait');
    await expectPaidOnce(s);
  }, 60_000);

  it('--wait: the second journal waits for the first, then adopts its rows and creates nothing', async () => {
    const s = await setup();
    const env = slowEnv(s.em, SCALE);
    const a = await startHolder(s);

    const refused = await runCliCaptured(runArgs(s, s.journalB), env, s.ws.dir);
    expect(refused.code, said(refused)).toBe(2);
    expect(refused.stderr).toContain(`process ${a.child.pid}`);
    expect(refused.stderr).toContain(realpathSync(s.journalA));

    const waited = await runCliCaptured(runArgs(s, s.journalB, '--wait'), env, s.ws.dir);
    expect(waited.code, said(waited)).toBe(0);
    expect(said(waited)).toContain(`waiting for process ${a.child.pid}`);
    expect(said(waited)).toMatch(new RegExp(`adopted ${N} item\\(s\\) from manifest\\.jsonl`));
    expect((await a.exited).code, a.stderr()).toBe(0);
    await expectPaidOnce(s);
  }, 60_000);

  it('one after the other: the second journal pays nothing and becomes the owner of the rows', async () => {
    const s = await setup();
    const env = envFor(s.em, SCALE);
    const first = await runCliCaptured(runArgs(s, s.journalA), env, s.ws.dir);
    expect(first.code, said(first)).toBe(0);
    expect(folderOwner(s.out, JOB)?.journal).toBe(realpathSync(s.journalA));
    const second = await runCliCaptured(runArgs(s, s.journalB), env, s.ws.dir);
    expect(second.code, said(second)).toBe(0);
    expect(said(second)).toContain(`written with the journal ${realpathSync(s.journalA)}`);
    expect(folderOwner(s.out, JOB)?.journal).toBe(realpathSync(s.journalB));
    expect(existsSync(s.lockPath)).toBe(false);
    await expectPaidOnce(s);
    // The manifest still lists each item's file once, as current.
    const current = manifestRows(path.join(s.out, 'manifest.jsonl')).filter((r) => r.current);
    expect(new Set(current.map((r) => r.file)).size).toBe(N);
    expect(current).toHaveLength(N);
  }, 60_000);

  it("a SIGKILLed holder's folder lock is taken over by the next run", async () => {
    const s = await setup();
    const env = slowEnv(s.em, SCALE);
    const a = await startHolder(s, true);
    a.child.kill('SIGKILL');
    await a.exited;
    // The lock outlives its holder: nothing released it.
    expect(existsSync(s.lockPath)).toBe(true);
    expect(JSON.parse(readFileSync(s.lockPath, 'utf8')).pid).toBe(a.child.pid);

    const next = await runCliCaptured(runArgs(s, s.journalA), env, s.ws.dir);
    expect(next.code, said(next)).toBe(0);
    expect(said(next)).toMatch(/took over the lock of job .+ in .+out from process (\d+)/);
    expect(said(next)).toContain(`from process ${a.child.pid} on ${hostname()}`);
    // A line's pid and hostname are pino's (the logging process's) names: the holder has its own field.
    const takeover = jsonLogs(next.stderr).find((line) => /took over the lock/.test(line.msg));
    expect(takeover?.pid).not.toBe(a.child.pid);
    expect(takeover?.holder).toMatchObject({ pid: a.child.pid, hostname: hostname() });
    expect(existsSync(s.lockPath)).toBe(false);
    await expectPaidOnce(s);
  }, 60_000);

  it('two jobs in one folder still run at the same time: the lock is per job', async () => {
    const s = await setup();
    const env = slowEnv(s.em, SCALE);
    const a = await startHolder(s);
    const otherJob = path.join(s.ws.dir, 'other.yaml');
    writeFileSync(otherJob, imageJob({ name: 'other-job', n: 2 }));
    const other = await runCliCaptured(['run', otherJob, '--journal', s.journalB], env, s.ws.dir);
    expect(other.code, said(other)).toBe(0);
    // Without --wait: it ran, and did not wait, while the first job held its lock in the folder.
    expect((await a.exited).code, a.stderr()).toBe(0);
    expectOneChargePerItem(await charges(s.em), N + 2);
  }, 60_000);

  it("another journal is refused while the owner's run is unfinished: it would pay again for what is in flight", async () => {
    const s = await setup();
    const env = slowEnv(s.em, SCALE);
    const a = await startHolder(s, true);
    a.child.kill('SIGKILL');
    await a.exited;
    const paid = (await charges(s.em)).length;
    expect(paid).toBeLessThan(N);

    const refused = await runCliCaptured(runArgs(s, s.journalB), env, s.ws.dir);
    expect(refused.code, said(refused)).toBe(2);
    expect(refused.stderr).toMatch(/has an unfinished run \S+ \(running\) in the journal/);
    expect(refused.stderr).toContain(`--journal ${realpathSync(s.journalA)}`);
    expect(await charges(s.em)).toHaveLength(paid);

    // The owner's journal finishes its run; then the other journal adopts it all.
    const resumed = await runCliCaptured(runArgs(s, s.journalA), env, s.ws.dir);
    expect(resumed.code, said(resumed)).toBe(0);
    const adopted = await runCliCaptured(runArgs(s, s.journalB), env, s.ws.dir);
    expect(adopted.code, said(adopted)).toBe(0);
    await expectPaidOnce(s);
  }, 60_000);

  it('a run stopped at its budget keeps the folder: another journal does not spend a second budget', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: JOB, n: 10, budget: 8 })); // 4 items fit
    const env = envFor(em, SCALE);
    const journal = (name: string) => ['--journal', path.join(ws.dir, name)];
    const first = await runCliCaptured(['run', ws.jobPath, ...journal('jA.db')], env, ws.dir);
    expect(first.code, said(first)).toBe(3);
    const second = await runCliCaptured(['run', ws.jobPath, ...journal('jB.db')], env, ws.dir);
    expect(second.code, said(second)).toBe(2);
    expect(second.stderr).toMatch(/unfinished run \S+ \(stopped_credits\)/);
    expect(await ledgerNet(em)).toBe(8);
  }, 60_000);
});
