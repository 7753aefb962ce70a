/**
 * A 429 whose Retry-After is absurd (34.7 days, an HTTP-date in
 * 2100) used to overflow Node's timer into a 1 ms busy loop, persisted so
 * every resume looped too. Now it is a stop: a real `ibatch run` process
 * against a real emulator over HTTP exits 4 within seconds, never prints a
 * `TimeoutOverflowWarning`, `status` shows `stopped_unreachable` with no
 * wait kept, and a second run once the service behaves completes with each
 * item charged once. A days-long not-before an older ibatch persisted is
 * dropped on resume instead of obeyed. Spawned processes need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import {
  type Exit,
  runCliCaptured,
  type SpawnedCli,
  spawnCli,
  testEmulator,
  until,
} from '../helpers/index.js';
import {
  charges,
  expectOneChargePerItem,
  heldEnv,
  imageJob,
  slowEnv,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const N = 12;

interface StatusJson {
  readonly journal: string;
  readonly run: { runId: string; status: string; notBefore: string | null };
}

async function statusJson(w: Workspace): Promise<StatusJson> {
  const result = await runCliCaptured(['status', w.jobPath, '--json'], {}, w.dir);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as StatusJson;
}

async function runStatus(w: Workspace): Promise<StatusJson['run']> {
  return (await statusJson(w)).run;
}

/** A fresh emulator, a 12-image job and `ibatch run` on it, once the first item is charged. */
async function startedRun(name: string) {
  const e = await testEmulator({ timeScale: SCALE });
  const ws = workspace(imageJob({ name, n: N }));
  const env = slowEnv(e, SCALE);
  const run = spawnCli(['run', ws.jobPath], { env: heldEnv(e, SCALE), cwd: ws.dir });
  await until(async () => (await charges(e)).length >= 1, {
    timeoutMs: 20_000,
    what: 'a first charge',
  });
  return { e, ws, env, run };
}

/** The process's exit; fails the test if it still runs after `ms` (a hang, a busy loop). */
async function exitWithin(run: SpawnedCli, ms: number): Promise<Exit> {
  await until(() => run.child.exitCode !== null || run.child.signalCode !== null, {
    timeoutMs: ms,
    what: 'the run to end',
  });
  return run.exited;
}

/** A second `ibatch run` of the same job resumes and completes, each item charged once. */
async function resumeCompletes(e: RunningEmulator, ws: Workspace, env: NodeJS.ProcessEnv) {
  const again = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
  expect((await exitWithin(again, 30_000)).code, again.stderr()).toBe(0);
  expect(again.output()).not.toContain('TimeoutOverflowWarning');
  expect(await runStatus(ws)).toMatchObject({ status: 'completed', notBefore: null });
  expectOneChargePerItem(await charges(e), N);
}

describe('an absurd Retry-After stops the run (never a busy loop)', () => {
  it.each([
    ['Retry-After: 3000000 (34.7 days)', '3000000'],
    ['Retry-After: an HTTP-date in 2100', new Date(Date.UTC(2100, 0, 1)).toUTCString()],
  ])(
    '%s',
    async (_what, retryAfter) => {
      const { e, ws, env, run } = await startedRun('retry-after-job');

      // Every request from now on: 429 with the absurd Retry-After.
      await e.admin.setFaults({ rates: { 'rate-limit-burst': 1 }, retryAfter });
      const { code } = await exitWithin(run, 10_000);
      expect(code, run.stderr()).toBe(4);
      expect(run.output()).not.toContain('TimeoutOverflowWarning');
      expect(run.stderr()).toMatch(/asked to wait .* more than the 6 h ibatch waits out/);
      expect(run.stderr()).toContain(`Retry-After: ${retryAfter}`);
      // The absurd wait is not kept (at most the gate's own short pause after a
      // 429): a resume asks the service again.
      const stopped = await runStatus(ws);
      expect(stopped.status).toBe('stopped_unreachable');
      if (stopped.notBefore !== null) {
        expect(Date.parse(stopped.notBefore) - Date.now()).toBeLessThan(60_000);
      }

      await e.admin.reset();
      await resumeCompletes(e, ws, env);
    },
    60_000,
  );

  it('a days-long wait an older ibatch persisted is dropped: the resume asks the service again', async () => {
    const { e, ws, env, run: first } = await startedRun('persisted-wait-job');
    first.child.kill('SIGINT');
    expect((await first.exited).code, first.stderr()).toBe(130);

    // What the old code persisted after `Retry-After: 3000000`.
    const { journal: path, run } = await statusJson(ws);
    const journal = await openJournal(path);
    journal.setRunNotBefore(run.runId, Date.now() + 3_000_000_000);
    journal.close();
    expect((await runStatus(ws)).notBefore).not.toBeNull();

    await resumeCompletes(e, ws, env);
  }, 60_000);
});
