/**
 * All or nothing (`run --all-or-nothing`, `allOrNothing: true`), each command
 * a real `ibatch` process against the emulator, its counters and ledger the
 * judge: a next run whose plan total does not fit the budget left,
 * `--max-spend` or the balance exits 3 with the plan's figures, creates
 * nothing, charges nothing and records no run; one that fits runs as usual.
 * Without it, `run` keeps its default (it starts and stops at the budget).
 */
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { spawnCli, testEmulator } from '../helpers/index.js';
import { charges, envFor, imageJob, type Workspace, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

/** `ibatch ARGS` as a real process in the workspace. */
async function ibatch(em: RunningEmulator, ws: Workspace, args: readonly string[]) {
  const exit = await spawnCli(args, { cwd: ws.dir, env: envFor(em, SCALE) }).exited;
  return { code: exit.code, stdout: exit.stdout, stderr: exit.stderr };
}

/** Creates the account's emulator counted (generations and trainings). */
async function creates(em: RunningEmulator): Promise<number> {
  const stats = await em.admin.stats();
  const counters = stats.accounts.find((a) => a.id === em.accounts[0]!.id)?.counters;
  return (counters?.creates ?? 0) + (counters?.trainings ?? 0);
}

/** How many runs of the job `status` lists (0 when the journal has none). */
async function runsOf(em: RunningEmulator, ws: Workspace): Promise<number> {
  const status = await ibatch(em, ws, ['status', '--json', '--journal', ws.journalPath]);
  if (status.code !== 0) return 0;
  return (JSON.parse(status.stdout) as { runs: unknown[] }).runs.length;
}

describe('run --all-or-nothing', () => {
  it('over the budget: exit 3 with the plan, 0 creates, no run; within it: runs as usual', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    // Five 2-credit images: 10 credits against a budget of 7.
    const ws = workspace(imageJob({ name: 'aon-budget', n: 5, budget: 7 }));
    const refused = await ibatch(em, ws, ['run', ws.jobPath, '--all-or-nothing']);
    expect(refused.code, refused.stderr).toBe(3);
    expect(refused.stdout).toMatch(/total\s+10 credits/);
    expect(refused.stdout).toMatch(/OVER BUDGET: 10 > budget left 7/);
    expect(refused.stderr).toMatch(/all or nothing.*nothing was started, nothing spent/);
    expect(await creates(em)).toBe(0);
    expect(await charges(em)).toHaveLength(0);
    expect(await runsOf(em, ws)).toBe(0);

    // The same job with a budget that holds it: a normal run, every item made.
    ws.write(imageJob({ name: 'aon-budget', n: 5, budget: 10 }));
    const fits = await ibatch(em, ws, ['run', ws.jobPath, '--all-or-nothing']);
    expect(fits.code, fits.stderr).toBe(0);
    expect(await charges(em)).toHaveLength(5);
    expect(await runsOf(em, ws)).toBe(1);
  }, 90_000);

  it('allOrNothing: true in the job, --json: the plan document, nothing spent; --max-spend and the balance count too', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const job = (budget: number) =>
      imageJob({ name: 'aon-job', n: 4, budget }).replace(
        `budget: ${budget}\n`,
        `budget: ${budget}\nallOrNothing: true\n`,
      );
    const ws = workspace(job(5));
    const refused = await ibatch(em, ws, ['run', ws.jobPath, '--json']);
    expect(refused.code, refused.stderr).toBe(3);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      total: 8,
      budget: 5,
      remaining: 5,
      verdict: 'over-budget',
    });

    // The budget fits; --max-spend does not.
    ws.write(job(100));
    const capped = await ibatch(em, ws, ['run', ws.jobPath, '--max-spend', '6']);
    expect(capped.code, capped.stderr).toBe(3);
    expect(capped.stdout).toMatch(/OVER BUDGET: 8 > --max-spend 6/);

    // Budget and cap fit; the balance does not.
    await em.admin.setCredits(em.accounts[0]!.id, 7);
    const poor = await ibatch(em, ws, ['run', ws.jobPath]);
    expect(poor.code, poor.stderr).toBe(3);
    expect(poor.stdout).toMatch(/OVER BALANCE: 8 > balance 7/);

    expect(await creates(em)).toBe(0);
    expect(await charges(em)).toHaveLength(0);
    expect(await runsOf(em, ws)).toBe(0);
  }, 90_000);

  it('without it, run keeps its default: it starts, spends within the budget and stops', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'aon-default', n: 5, budget: 7 }));
    const stopped = await ibatch(em, ws, ['run', ws.jobPath]);
    expect(stopped.code, stopped.stderr).toBe(3);
    expect(stopped.stdout).not.toMatch(/OVER BUDGET/);
    const made = await charges(em);
    expect(made.length).toBeGreaterThan(0);
    expect(made.length).toBeLessThan(5);
    expect(await runsOf(em, ws)).toBe(1);
  }, 90_000);
});
