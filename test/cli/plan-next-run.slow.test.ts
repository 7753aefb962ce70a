/**
 * `plan` quotes what the next `run` does given the journal (interface: "plan
 * and status take --journal"), end to end with the CLI against a real
 * emulator, the ledger as the judge: after a finished run one added CSV row
 * is the whole total and exactly what `run` then charges; a training is in
 * the total and a budget below training + images is refused by `plan` (exit
 * 3) and never passed by `run`; `--fresh STEP` quotes the done items again.
 * `status JOB` shows the job's spend over all runs and the items no longer
 * in the job file. Nothing here spawns a process.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { priceOf, type RunningEmulator } from '../../src/emulator/index.js';
import { ASSUMED_TRAINING_PRICE } from '../../src/plan/index.js';
import { emulatorEnv, runCliCaptured, said, tempDir, testEmulator } from '../helpers/index.js';
import {
  makeWorkspace,
  SCALE as PIPELINE_SCALE,
  charges as pipelineCharges,
  runJobCli,
} from '../scheduler/fixtures/pipeline/helpers.js';
import { charges, envFor, ledgerNet, type Workspace, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

interface PlanStepDoc {
  id: string;
  items: number;
  outputs: number;
  cost: number;
  new: number;
  changed: number;
  retry: number;
  done: number;
  removed: number;
  fresh: number;
}

interface PlanDoc {
  total: number;
  budget: number | null;
  remaining: number | null;
  spent: number;
  balance: number;
  quotes: number;
  next: { kind: string; resumes: string | null };
  trainings: { count: number; price: number; cost: number; reused: number };
  steps: PlanStepDoc[];
}

/** One sdxl-lite image (2 credits) per CSV row. */
const CSV_JOB = [
  'version: 1',
  'name: plan-rows',
  'output: out',
  'generations:',
  '  - id: shots',
  '    model: sdxl-lite',
  '    rows: products.csv',
  '    input:',
  '      prompt: "{{ product }} on a table"',
  '',
].join('\n');

function writeRows(ws: Workspace, products: readonly string[]): void {
  writeFileSync(path.join(ws.dir, 'products.csv'), `product\n${products.join('\n')}\n`);
}

async function plan(env: NodeJS.ProcessEnv, jobPath: string, ...args: string[]) {
  const result = await runCliCaptured(
    ['plan', jobPath, '--json', ...args],
    env,
    path.dirname(jobPath),
  );
  const doc = result.stdout ? (JSON.parse(result.stdout) as PlanDoc) : undefined;
  return { ...result, doc };
}

const run = (em: RunningEmulator, ws: Workspace, ...args: string[]) =>
  runCliCaptured(['run', ws.jobPath, ...args], envFor(em, SCALE), ws.dir);

describe('plan quotes the next run', () => {
  it('a row added to a finished job: the total is that row, and run charges exactly it', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const env = envFor(em, SCALE);
    const ws = workspace(CSV_JOB);
    writeRows(ws, ['mug', 'scarf', 'lamp']);

    // No journal yet: every item is new, and plan leaves no journal behind.
    const first = await plan(env, ws.jobPath);
    expect(first.code, said(first)).toBe(0);
    expect(first.doc).toMatchObject({ total: 6, spent: 0, next: { kind: 'new' } });
    expect(first.doc?.steps[0]).toMatchObject({ items: 3, new: 3, done: 0 });
    expect(existsSync(ws.journalPath)).toBe(false);

    expect((await run(em, ws)).code).toBe(0);
    const finished = await plan(env, ws.jobPath);
    expect(finished.code, said(finished)).toBe(0);
    expect(finished.doc).toMatchObject({ total: 0, spent: 6, next: { kind: 'nothing' } });
    expect(finished.doc?.steps[0]).toMatchObject({ items: 0, done: 3, cost: 0 });

    writeRows(ws, ['mug', 'scarf', 'lamp', 'vase']);
    const added = await plan(env, ws.jobPath);
    expect(added.code, said(added)).toBe(0);
    expect(added.doc?.total).toBe(2);
    expect(added.doc?.steps[0]).toMatchObject({ items: 1, outputs: 1, cost: 2, new: 1, done: 3 });
    const text = await runCliCaptured(['plan', ws.jobPath], env, ws.dir);
    expect(text.stdout).toMatch(/total\s+2 credits/);

    const netBefore = await ledgerNet(em);
    const made = await run(em, ws);
    expect(made.code, said(made)).toBe(0);
    expect((await ledgerNet(em)) - netBefore).toBe(added.doc?.total);
    expect(await charges(em)).toHaveLength(4);

    // A row removed: nothing to make; plan and status list it as left alone.
    writeRows(ws, ['scarf', 'lamp', 'vase']);
    const removed = await plan(env, ws.jobPath);
    expect(removed.doc).toMatchObject({ total: 0 });
    expect(removed.doc?.steps[0]).toMatchObject({ done: 3, removed: 1 });
    const status = await runCliCaptured(['status', ws.jobPath, '--json'], {}, ws.dir);
    expect(status.code, said(status)).toBe(0);
    const job = (JSON.parse(status.stdout) as { job: Record<string, unknown> }).job;
    expect(job).toMatchObject({
      removed: [{ step: 'shots', items: 1 }],
      spend: { net: await ledgerNet(em) },
      budget: null,
    });
    const human = await runCliCaptured(['status', ws.jobPath], {}, ws.dir);
    expect(human.stdout).toMatch(/shots: 1 item\(s\) no longer in the job file, left as they are/);
  }, 90_000);

  it('--fresh STEP quotes the done items of the step; a typo is exit 2', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const env = envFor(em, SCALE);
    const ws = workspace(CSV_JOB);
    writeRows(ws, ['mug', 'scarf', 'lamp']);
    expect((await run(em, ws)).code).toBe(0);
    const fresh = await plan(env, ws.jobPath, '--fresh', 'shots');
    expect(fresh.code, said(fresh)).toBe(0);
    expect(fresh.doc?.total).toBe(6);
    expect(fresh.doc?.steps[0]).toMatchObject({ items: 3, fresh: 3, done: 0 });
    const netBefore = await ledgerNet(em);
    expect((await run(em, ws, '--fresh', 'shots')).code).toBe(0);
    expect((await ledgerNet(em)) - netBefore).toBe(6);
    const typo = await plan(env, ws.jobPath, '--fresh', 'shot');
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('"shot"');
    // --max-spend below the total: the next run would stop, so plan says no.
    writeRows(ws, ['mug', 'scarf', 'lamp', 'vase', 'pen']);
    const capped = await plan(env, ws.jobPath, '--max-spend', '3');
    expect(capped.code).toBe(3);
    expect(capped.doc).toMatchObject({ total: 4, maxSpend: 3, verdict: 'over-budget' });
  }, 90_000);

  it('a training job over its budget: plan exit 3 with the training, run stops under the budget; raised, once', async () => {
    const em = await testEmulator({ timeScale: PIPELINE_SCALE, seed: 5 });
    const env = emulatorEnv(em);
    const dir = tempDir('plan-training');
    const job = makeWorkspace(dir, 'job.yaml', { 'output: out': 'output: out\nbudget: 310' });
    const journal = path.join(dir, '.ibatch', 'journal.db');

    const over = await plan(env, job);
    expect(over.code, said(over)).toBe(3);
    const images =
      2 * priceOf('flux-portrait', { input: { prompt: 'x', aspectRatio: '9:16' } }).cost +
      2 * priceOf('kling-i2v', { input: { prompt: 'x', duration: 5 } }).cost;
    expect(over.doc?.trainings).toMatchObject({ count: 1, cost: ASSUMED_TRAINING_PRICE });
    expect(over.doc?.total).toBe(ASSUMED_TRAINING_PRICE + images);
    expect(over.doc).toMatchObject({ budget: 310, remaining: 310, verdict: 'over-budget' });
    const text = await runCliCaptured(['plan', job], env, dir);
    expect(text.stdout).toMatch(/no preview exists for trainings/);
    expect(text.stdout).toMatch(/OVER BUDGET/);
    expect(existsSync(journal)).toBe(false);

    const stopped = await runJobCli(job, env);
    expect(stopped.code, said(stopped)).toBe(3);
    expect(said(stopped)).not.toMatch(/top up/i);
    expect(await ledgerNet(em)).toBeLessThanOrEqual(310);

    // The budget left after the stopped run is what plan weighs the rest against.
    const left = await plan(env, job);
    expect(left.doc?.remaining).toBe(310 - (await ledgerNet(em)));

    writeFileSync(job, readFileSync(job, 'utf8').replace('budget: 310', 'budget: 2000'));
    const done = await runJobCli(job, env);
    expect(done.code, said(done)).toBe(0);
    expect((await pipelineCharges(em)).trainings).toHaveLength(1);

    const after = await plan(env, job);
    expect(after.code, said(after)).toBe(0);
    expect(after.doc).toMatchObject({ total: 0, trainings: { count: 0, cost: 0 } });
    expect(after.doc?.spent).toBe(await ledgerNet(em));
  }, 90_000);
});
