/**
 * `status` after every way a run stops: a real `ibatch run`
 * process against a real emulator over HTTP, stopped by a fault injected
 * through the emulator's admin API or a signal; afterwards `ibatch status
 * --json` shows the stop status matching the exit code, never `running`.
 * Spawned processes need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { type SpawnedCli, spawnCli, testEmulator, until } from '../helpers/index.js';
import { charges, heldEnv, imageJob, slowEnv, statusOf, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

interface StopCase {
  /** Before the run starts. */
  readonly before?: (e: RunningEmulator) => Promise<unknown>;
  readonly budget?: number;
  /** Once the run has charged something. */
  readonly during?: (e: RunningEmulator, run: SpawnedCli) => Promise<unknown>;
  readonly exit: number;
  readonly status: string;
}

const CASES: readonly [string, StopCase][] = [
  [
    'a key revoked mid-run',
    {
      during: (e) => e.admin.revokeKey(e.accounts[0]!.apiKey),
      exit: 5,
      status: 'stopped_unauthorized',
    },
  ],
  [
    'a 402 mid-run (balance runs out)',
    { before: (e) => e.admin.setCredits(e.accounts[0]!.id, 7), exit: 3, status: 'stopped_credits' },
  ],
  ['the budget reached', { budget: 7, exit: 3, status: 'stopped_credits' }],
  [
    'the service gone mid-run (unreachable after retries)',
    {
      during: (e) => e.stop(),
      exit: 4,
      status: 'stopped_unreachable',
    },
  ],
  [
    'SIGINT',
    { during: async (_e, run) => run.child.kill('SIGINT'), exit: 130, status: 'interrupted' },
  ],
  [
    'SIGTERM',
    { during: async (_e, run) => run.child.kill('SIGTERM'), exit: 130, status: 'interrupted' },
  ],
];

describe('status after each way a run stops', () => {
  it.each(CASES)(
    '%s',
    async (_what, c) => {
      const e = await testEmulator({ timeScale: SCALE });
      const ws = workspace(
        imageJob({ name: 'stop-job', n: 20, ...(c.budget ? { budget: c.budget } : {}) }),
      );
      await c.before?.(e);
      const env = c.during ? heldEnv(e, SCALE) : slowEnv(e, SCALE);
      const run = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
      if (c.during) {
        await until(async () => (await charges(e)).length >= 1, {
          timeoutMs: 20_000,
          what: 'a first charge',
        });
        await c.during(e, run);
      }
      const { code } = await run.exited;
      expect(code, run.stderr()).toBe(c.exit);
      expect(await statusOf(ws)).toMatchObject({ status: c.status, finished: false });
    },
    60_000,
  );

  it('a key refused at the start of a resume (exit 5) leaves the interrupted run as it was', async () => {
    const e = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'resume-job', n: 20 }));
    const env = slowEnv(e, SCALE);
    const first = spawnCli(['run', ws.jobPath], { env: heldEnv(e, SCALE), cwd: ws.dir });
    await until(async () => (await charges(e)).length >= 1, {
      timeoutMs: 20_000,
      what: 'a first charge',
    });
    first.child.kill('SIGINT');
    expect((await first.exited).code, first.stderr()).toBe(130);
    await e.admin.revokeKey(e.accounts[0]!.apiKey);

    // The key is checked before the resume is recorded: the run is not marked refused.
    const again = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
    expect((await again.exited).code, again.stderr()).toBe(5);
    expect((await statusOf(ws)).status).toBe('interrupted');
  }, 60_000);
});
