/**
 * Signals and pipes never kill a run or corrupt its state: real
 * `ibatch` processes (`node bin/ibatch.js`, needs `npm run build`) against a
 * real emulator over HTTP. SIGHUP ends a run like SIGINT/SIGTERM (exit 130,
 * `interrupted`, lock released); a reader that goes away (`| head -2`,
 * `| head -c0`) only stops the output, never the run or its exit code.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockPathFor } from '../../src/journal/index.js';
import { emulatorEnv, expectNoStack, spawnCli, testEmulator, until } from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  slowEnv,
  statusOf,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const RESUME_LINE = 'Run the same command again to resume';

describe('signals', () => {
  it('SIGHUP mid-run: exit 130, run interrupted, lock released; the resume charges each item once', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'hup-job', n: 20 }));
    const env = slowEnv(e, SCALE);
    const run = spawnCli(['run', ws.jobPath], { env: heldEnv(e, SCALE), cwd: ws.dir });
    await until(async () => (await charges(e)).length >= 1, {
      timeoutMs: 20_000,
      what: 'a first charge',
    });
    run.child.kill('SIGHUP');
    const exit = await run.exited;
    expect({ code: exit.code, signal: exit.signal }, run.stderr()).toEqual({
      code: 130,
      signal: null,
    });
    expect(run.stdout()).toContain(RESUME_LINE);
    expect((await statusOf(ws)).status).toBe('interrupted');
    // No lock left behind: the folder of the journal's locks holds no file.
    const lockPath = lockPathFor(ws.journalPath, 'hup-job');
    expect(existsSync(lockPath)).toBe(false);
    expect(readdirSync(path.dirname(lockPath))).toEqual([]);

    const again = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    expect((await again.exited).code, again.stderr()).toBe(0);
    expect((await statusOf(ws)).status).toBe('completed');
    expectOneChargePerItem(await charges(e), 20);
  }, 90_000);

  it('a second SIGHUP while the run stops (a closed terminal sends two) does not cut the stop short', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'hup-twice', n: 20 }));
    const run = spawnCli(['run', ws.jobPath], { env: heldEnv(e, SCALE), cwd: ws.dir });
    await until(async () => (await charges(e)).length >= 1, {
      timeoutMs: 20_000,
      what: 'a first charge',
    });
    run.child.kill('SIGHUP');
    // The first one was handled: the run logs that it is stopping.
    await until(() => run.stderr().includes('"run.stopping"'), {
      timeoutMs: 20_000,
      everyMs: 1,
      what: 'the run to start stopping',
    });
    expect(run.child.kill('SIGHUP'), 'the second SIGHUP reached a live process').toBe(true);
    const exit = await run.exited;
    expect({ code: exit.code, signal: exit.signal }, run.stderr()).toEqual({
      code: 130,
      signal: null,
    });
    expect((await statusOf(ws)).status).toBe('interrupted');
    expect(existsSync(lockPathFor(ws.journalPath, 'hup-twice'))).toBe(false);
  }, 60_000);

  it('SIGINT while a start-up call hangs prints the resume line', async () => {
    const e = await testEmulator();
    // The run's first request never gets an answer.
    await e.admin.scriptFaults([{ fault: 'stall' }]);
    const ws = workspace(imageJob({ name: 'startup-hang', n: 1 }));
    const run = spawnCli(['run', ws.jobPath], { env: emulatorEnv(e), cwd: ws.dir });
    await until(async () => (await e.admin.stats()).faults.length > 0, {
      timeoutMs: 20_000,
      what: 'the stalled start-up request',
    });
    run.child.kill('SIGINT');
    const { code } = await run.exited;
    expect(code, run.stderr()).toBe(130);
    expect(run.stderr()).toContain('ibatch: interrupted');
    expect(run.stderr()).toContain(RESUME_LINE);
    expectNoStack(run.stderr());
  }, 30_000);
});

describe('a closed stdout or stderr', () => {
  it('`run` whose stdout and stderr readers go away after the first line (| head) still finishes the run', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'pipe-job', n: 6 }));
    const run = spawnCli(['run', ws.jobPath], { env: envFor(e, SCALE), cwd: ws.dir });
    await until(() => run.output().includes('\n'), { timeoutMs: 20_000, what: 'a first line' });
    run.child.stdout?.destroy();
    run.child.stderr?.destroy();
    const exit = await run.exited;
    expect({ code: exit.code, signal: exit.signal }, run.output()).toEqual({
      code: 0,
      signal: null,
    });
    expect((await statusOf(ws)).status).toBe('completed');
    expectOneChargePerItem(await charges(e), 6);
    expect(existsSync(path.join(ws.dir, 'out', 'manifest.jsonl'))).toBe(true);
    expect(existsSync(lockPathFor(ws.journalPath, 'pipe-job'))).toBe(false);
  }, 60_000);

  it('`plan --json` whose stdout is closed at once (| head -c0): the plan exit code, no stack', async () => {
    const e = await testEmulator();
    const ws = workspace(imageJob({ name: 'plan-pipe', n: 3 }));
    const run = spawnCli(['plan', ws.jobPath, '--json'], { env: emulatorEnv(e), cwd: ws.dir });
    run.child.stdout?.destroy();
    const exit = await run.exited;
    expect({ code: exit.code, signal: exit.signal }, run.stderr()).toEqual({
      code: 0,
      signal: null,
    });
    expectNoStack(run.stderr());
    expect(run.stderr()).not.toContain('EPIPE');
  }, 30_000);
});
