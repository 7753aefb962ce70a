/**
 * Issue 13.4: a 429 whose Retry-After is absurd (34.7 days, an HTTP-date in
 * 2100) used to overflow Node's timer into a 1 ms busy loop, persisted so
 * every resume looped too. Now it is a stop: a real `ibatch run` process
 * against a real emulator over HTTP exits 4 within seconds, never prints a
 * `TimeoutOverflowWarning`, `status` shows `stopped_unreachable` with no
 * wait kept, and a second run once the service behaves completes with each
 * item charged once. Spawned processes need `npm run build`.
 */
import { describe, expect, it } from 'vitest';
import { runCliCaptured, spawnCli, testEmulator, until } from '../helpers/index.js';
import {
  charges,
  expectOneChargePerItem,
  imageJob,
  slowEnv,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const N = 12;

async function runStatus(w: Workspace): Promise<{ status: string; notBefore: string | null }> {
  const result = await runCliCaptured(['status', w.jobPath, '--json'], {}, w.dir);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { run: { status: string; notBefore: string | null } }).run;
}

describe('an absurd Retry-After stops the run (never a busy loop)', () => {
  it.each([
    ['Retry-After: 3000000 (34.7 days)', '3000000'],
    ['Retry-After: an HTTP-date in 2100', new Date(Date.UTC(2100, 0, 1)).toUTCString()],
  ])(
    '%s',
    async (_what, retryAfter) => {
      const e = await testEmulator({ timeScale: SCALE });
      const ws = workspace(imageJob({ name: 'retry-after-job', n: N }));
      const env = slowEnv(e, SCALE);
      const run = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
      await until(async () => (await charges(e)).length >= 1, {
        timeoutMs: 20_000,
        what: 'a first charge',
      });

      // Every request from now on: 429 with the absurd Retry-After.
      await e.admin.setFaults({ rates: { 'rate-limit-burst': 1 }, retryAfter });
      await until(() => run.child.exitCode !== null || run.child.signalCode !== null, {
        timeoutMs: 10_000,
        what: 'the run to stop',
      });
      const { code } = await run.exited;
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
      const again = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
      const second = await again.exited;
      expect(second.code, again.stderr()).toBe(0);
      expect(again.output()).not.toContain('TimeoutOverflowWarning');
      expect((await runStatus(ws)).status).toBe('completed');
      expectOneChargePerItem(await charges(e), N);
    },
    60_000,
  );
});
