/**
 * `ibatch run` semantics of the interface, end to end against a real emulator
 * over HTTP: SIGINT -> 130 and a resume of the same run; `--run-id` of a
 * finished run is a no-op; a job changed during a stopped run converges
 * (the resume names what changed); one process per journal (`--wait` waits); a persisted rate wait
 * survives a SIGKILL and the resumed run sends nothing before it.
 * Spawned processes need `npm run build`.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { lockPathFor } from '../../src/journal/index.js';
import { runCliCaptured, spawnCli, testEmulator, until } from '../helpers/index.js';
import {
  charges,
  earlyCount,
  envFor,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  readRuns,
  sentBeforePause,
  slowEnv,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
let em: RunningEmulator | undefined;
let ws: Workspace | undefined;

describe('ibatch run semantics', () => {
  it('SIGINT exits 130 saying how to resume; the next run resumes the same run with no double charge', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const N = 20;
    ws = workspace(imageJob({ name: 'sigint-job', n: N }));
    const env = slowEnv(em, SCALE);
    const run = spawnCli(['run', ws.jobPath], { env: heldEnv(em, SCALE), cwd: ws.dir });
    const emu = em;
    await until(async () => (await charges(emu)).length >= 2, {
      timeoutMs: 20_000,
      what: 'a first charge',
    });
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(130);
    expect(run.stdout() + run.stderr()).toMatch(/again to resume/);
    const partial = (await charges(em)).length;
    expect(partial).toBeLessThan(N);
    const [stopped] = await readRuns(ws.journalPath);
    expect(stopped?.status).toBe('interrupted');

    const resumed = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain(`run ${stopped?.runId}`);
    expect((await readRuns(ws.journalPath)).map((r) => r.runId)).toEqual([stopped?.runId]);
    expectOneChargePerItem(await charges(em), N);
  }, 60_000);

  it('--run-id of a finished run is a no-op that spends nothing', async () => {
    em = await testEmulator({ timeScale: SCALE });
    ws = workspace(imageJob({ name: 'noop-job', n: 3 }));
    const env = envFor(em, SCALE);
    const first = await runCliCaptured(['run', ws.jobPath, '--run-id', 'ci-42'], env, ws.dir);
    expect(first.code, first.stderr).toBe(0);
    const ledger = await em.admin.ledger(em.accounts[0]!.id);
    const creates = (await em.admin.stats()).accounts[0]?.counters.creates;
    expect(ledger).toHaveLength(3);

    const again = await runCliCaptured(['run', ws.jobPath, '--run-id', 'ci-42'], env, ws.dir);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/already finished/);
    expect(await em.admin.ledger(em.accounts[0]!.id)).toEqual(ledger);
    expect((await em.admin.stats()).accounts[0]?.counters.creates).toBe(creates);
    expect(await readRuns(ws.journalPath)).toHaveLength(1);
  }, 60_000);

  it('a job changed during a stopped run converges: the resume names what changed and pays nothing twice', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const N = 6;
    ws = workspace(imageJob({ name: 'changed-job', n: N, budget: 5 })); // 2 items fit
    const env = envFor(em, SCALE);
    const first = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(first.code, first.stderr).toBe(3);
    const before = (await charges(em)).length;
    expect(before).toBe(2);

    ws.write(imageJob({ name: 'changed-job', n: N, budget: 100, prompt: 'a busy market, scene' }));
    const resumed = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    // The steps and fields that changed, not hashed keys.
    expect(resumed.stdout + resumed.stderr).toMatch(/shots\/scene=s\d: input\.prompt changed/);
    const runs = await readRuns(ws.journalPath);
    // The stopped run finished with the new prompt; the 2 items it had paid with
    // the old prompt were made again by a follow-up run.
    expect(runs).toHaveLength(2);
    expect(runs.every((r) => r.status === 'completed')).toBe(true);
    expect((await charges(em)).length).toBe(before + N);
    expectOneChargePerItem((await charges(em)).slice(before), N);

    const again = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(again.code, again.stderr).toBe(0);
    expect((await charges(em)).length).toBe(before + N);
  }, 60_000);

  it('a second run on the same journal exits 2 naming the holder; with --wait it waits, then runs', async () => {
    em = await testEmulator({ timeScale: SCALE });
    const N = 20;
    ws = workspace(imageJob({ name: 'lock-job', n: N }));
    const env = slowEnv(em, SCALE);
    const holder = spawnCli(['run', ws.jobPath, '--run-id', 'lock-a'], { env, cwd: ws.dir });
    const emu = em;
    const lockPath = lockPathFor(ws.journalPath, 'lock-job');
    await until(async () => existsSync(lockPath) && (await charges(emu)).length >= 1, {
      timeoutMs: 20_000,
      what: 'the holder to charge',
    });

    const second = await runCliCaptured(['run', ws.jobPath, '--run-id', 'lock-a'], env, ws.dir);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`process ${holder.child.pid}`);
    expect(second.stderr).toContain('--wait');

    // The waiter starts while the holder's run is unfinished: "already finished" proves it
    // opened the journal only after the holder had completed and released it.
    const [during] = await readRuns(ws.journalPath);
    expect(during?.status).toBe('running');
    const waited = await runCliCaptured(
      ['run', ws.jobPath, '--run-id', 'lock-a', '--wait'],
      env,
      ws.dir,
    );
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stdout).toMatch(/already finished/);
    expect((await holder.exited).code, holder.stderr()).toBe(0);
    expectOneChargePerItem(await charges(em), N);
  }, 60_000);

  it('a persisted rate wait survives SIGKILL: status shows it, the resumed run sends nothing before it', async () => {
    // The service allows 2 creates per 6 s; our limits allow more, so the third create gets a
    // 429 with a Retry-After of several seconds, which pauses the gate and is journaled.
    const scale = 10;
    em = await testEmulator({
      timeScale: scale,
      rateLimits: { generations: { count: 2, windowMs: 60_000 } },
    });
    const N = 4;
    ws = workspace(imageJob({ name: 'wait-job', n: N }));
    const env = envFor(em, scale);
    const run = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    const journalPath = ws.journalPath;
    const waiting = await until(
      async () => {
        const [r] = await readRuns(journalPath).catch(() => []);
        return r?.notBefore ? r : undefined;
      },
      { timeoutMs: 20_000, what: 'a persisted notBefore' },
    );
    run.child.kill('SIGKILL');
    await run.exited;
    expect(waiting.notBefore).toBeGreaterThan(Date.now());
    const [killed] = await readRuns(ws.journalPath);
    // A 429 still in flight when we read it may have extended the wait a little.
    const notBefore = killed?.notBefore ?? 0;
    expect(notBefore).toBeGreaterThanOrEqual(waiting.notBefore ?? 0);

    const status = await runCliCaptured(['status', ws.jobPath, '--json'], {}, ws.dir);
    expect(status.code, status.stderr).toBe(0);
    const doc = JSON.parse(status.stdout);
    expect(doc.run.notBefore).toBe(new Date(notBefore).toISOString());
    expect(doc.run.waitMs).toBeGreaterThan(0);
    const text = await runCliCaptured(['status', ws.jobPath], {}, ws.dir);
    expect(text.stdout).toMatch(/rate wait: resumes in \d+s/);

    const earlyBefore = await earlyCount(em);
    const resumed = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(Date.now()).toBeGreaterThanOrEqual(notBefore);
    expect(await sentBeforePause(em, earlyBefore, notBefore)).toEqual([]);
    expectOneChargePerItem(await charges(em), N);
    const [done] = await readRuns(ws.journalPath);
    expect(done?.runId).toBe(killed?.runId);
    expect(done?.notBefore).toBeNull();
  }, 60_000);
});
