/**
 * One runner per job across machines with a PostgreSQL journal, as users
 * meet it: `ibatch run` processes in two folders sharing nothing but the
 * server and the emulator. A second runner is refused (exit 2) naming the
 * holder's host and pid; with `--wait` it waits and then converges, creating
 * nothing the holder made (the emulator's ledger as the judge); a `--wait`
 * runner whose holder is SIGKILLed takes the job (the advisory lock died with
 * the holder's connection) and finishes it, one charge per item. Spawned
 * processes need `npm run build`.
 */
import { expect, it } from 'vitest';
import { expectNoStack, runCliCaptured, spawnCli, until, whileStopped } from '../helpers/index.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';
import { charges, expectOneChargePerItem, machineARunning, slowEnv } from '../scheduler/helpers.js';

const SCALE = 30;
const server = postgresForFile();

/** Machine A running the job (slowly, so it is still running), once it holds the job: it creates only then. */
async function holderRunning(name: string, n: number) {
  const url = await server.newSchema();
  const { em, a, b, runA } = await machineARunning({ url, name, n, scale: SCALE, charged: 1 });
  return { em, a, b, url, holder: runA };
}

describePostgres(`the job lock on a PostgreSQL journal`, () => {
  it('a second runner is refused naming the holder; with --wait it waits, then converges with 0 creates', async () => {
    const N = 6;
    const { em, b, url, holder } = await holderRunning('held-job', N);
    const env = { ...slowEnv(em, SCALE), HOSTNAME: 'machine-b' };
    const waiter = await whileStopped(holder, async () => {
      const refused = await runCliCaptured(['run', b.jobPath, '--journal', url], env, b.dir);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain('The job "held-job" is being run by');
      expect(refused.stderr).toContain(`process ${holder.child.pid} on machine-a`);
      expectNoStack(refused.stderr);
      expect(refused.stdout + refused.stderr).not.toContain(server.password);

      const waiting = spawnCli(['run', b.jobPath, '--wait', '--journal', url], { env, cwd: b.dir });
      await until(() => waiting.stderr().includes(`waiting for process ${holder.child.pid}`), {
        timeoutMs: 20_000,
        what: 'the second runner to wait for the lock',
      });
      return waiting;
    });
    expect((await holder.exited).code, holder.stderr()).toBe(0);
    // Everything was made by the holder: every item charged once before the waiter ran.
    expectOneChargePerItem(await charges(em), N);
    const waited = await waiter.exited;
    expect(waited.code, waiter.stderr()).toBe(0);
    expect(waiter.stdout()).toMatch(/nothing to do/);
    expectOneChargePerItem(await charges(em), N);
  }, 90_000);

  it("a SIGKILLed holder's job is taken by the runner waiting for it, which finishes it", async () => {
    const N = 8;
    const { em, b, url, holder } = await holderRunning('killed-holder', N);
    holder.child.kill('SIGSTOP'); // unfinished until it is killed, however slow the machine
    const env = { ...slowEnv(em, SCALE), HOSTNAME: 'machine-b' };
    const waiter = spawnCli(['run', b.jobPath, '--wait', '--journal', url], { env, cwd: b.dir });
    await until(() => waiter.stderr().includes(`waiting for process ${holder.child.pid}`), {
      timeoutMs: 20_000,
      what: 'the second runner to wait for the lock',
    });
    holder.child.kill('SIGKILL');
    await holder.exited;
    expect((await charges(em)).length).toBeLessThan(N);

    const { code } = await waiter.exited;
    expect(code, waiter.stderr()).toBe(0);
    expectOneChargePerItem(await charges(em), N);
    const status = await runCliCaptured(['status', '--json', '--journal', url], env, b.dir);
    const { runs } = JSON.parse(status.stdout) as { runs: { status: string }[] };
    // The waiter resumed the holder's run: one run, completed.
    expect(runs).toEqual([expect.objectContaining({ status: 'completed' })]);
  }, 90_000);
});
