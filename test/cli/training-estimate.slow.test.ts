/**
 * The training price is an estimate until this account's first training
 * charge is in the journal (the service publishes none and has no preview):
 * `plan` and `status` say `estimated` and where the number comes from (the
 * job's `trainingEstimate:`, `$IBATCH_TRAINING_ESTIMATE`, else the assumed
 * default), and stop saying it once a charge is known. When the service
 * charges more than the estimate, the charge replaces the reservation as it
 * is: the budget can be passed by the difference, and nothing more is
 * created. Every command is a real `ibatch` process; the ledger is the judge.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { TRAINING_COST } from '../../src/emulator/index.js';
import { ASSUMED_TRAINING_PRICE } from '../../src/plan/index.js';
import { emulatorEnv, scaledLimits, spawnCli, tempDir } from '../helpers/index.js';
import {
  charges,
  emulators,
  makeWorkspace,
  SCALE,
} from '../scheduler/fixtures/pipeline/helpers.js';

interface PriceDoc {
  credits: number;
  estimated: boolean;
  source: string;
}

async function ibatch(
  em: RunningEmulator,
  job: string,
  args: readonly string[],
  extraEnv: NodeJS.ProcessEnv = {},
) {
  const cwd = job.replace(/\/[^/]+$/, '');
  const env = { ...emulatorEnv(em), IBATCH_LIMITS: scaledLimits(SCALE), ...extraEnv };
  const exit = await spawnCli(args, { cwd, env }).exited;
  return { code: exit.code, stdout: exit.stdout, stderr: exit.stderr };
}

async function planPrice(em: RunningEmulator, job: string, env: NodeJS.ProcessEnv = {}) {
  const result = await ibatch(em, job, ['plan', job, '--json'], env);
  const doc = JSON.parse(result.stdout) as {
    trainingPrice: PriceDoc;
    trainings: { count: number; price: number; cost: number; estimated: boolean };
  };
  return { code: result.code, ...doc };
}

async function status(em: RunningEmulator, job: string, env: NodeJS.ProcessEnv = {}) {
  const json = await ibatch(em, job, ['status', job, '--json'], env);
  expect(json.code, json.stderr).toBe(0);
  const text = await ibatch(em, job, ['status', job], env);
  const doc = JSON.parse(json.stdout) as {
    trainingPrice: PriceDoc;
    job: { remaining: number | null; spend: { net: number } };
  };
  return { ...doc, text: text.stdout };
}

describe('the training estimate', () => {
  it('plan says estimated and where the number comes from: the assumption, the environment, the job', async () => {
    const em = await emulators();
    const job = makeWorkspace(tempDir('estimate-plan'), 'job.yaml');

    const assumed = await planPrice(em, job);
    expect(assumed.trainingPrice).toEqual({
      credits: ASSUMED_TRAINING_PRICE,
      estimated: true,
      source: 'assumption',
    });
    expect(assumed.trainings).toMatchObject({ count: 1, cost: ASSUMED_TRAINING_PRICE });
    const text = await ibatch(em, job, ['plan', job]);
    expect(text.stdout).toMatch(
      new RegExp(`price ${ASSUMED_TRAINING_PRICE} estimated \\(assumed: no price is published\\)`),
    );
    expect(text.stdout).toMatch(/their price is an estimate until this/);

    const fromEnv = await planPrice(em, job, { IBATCH_TRAINING_ESTIMATE: '250' });
    expect(fromEnv.trainingPrice).toEqual({ credits: 250, estimated: true, source: 'environment' });
    expect(fromEnv.trainings).toMatchObject({ count: 1, cost: 250 });

    writeFileSync(
      job,
      readFileSync(job, 'utf8').replace('output: out', 'output: out\ntrainingEstimate: 280'),
    );
    const fromJob = await planPrice(em, job, { IBATCH_TRAINING_ESTIMATE: '250' });
    expect(fromJob.trainingPrice).toEqual({ credits: 280, estimated: true, source: 'job' });

    const bad = await ibatch(em, job, ['plan', job], { IBATCH_TRAINING_ESTIMATE: 'lots' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('$IBATCH_TRAINING_ESTIMATE');
    expect(await charges(em).then((c) => c.ledger)).toHaveLength(0);
  }, 90_000);

  it('a charge above the estimate replaces the reservation: the budget is passed by the difference, then nothing more is made; estimated no more', async () => {
    const em = await emulators();
    const job = makeWorkspace(tempDir('estimate-charge'), 'job.yaml', {
      'output: out': 'output: out\nbudget: 150',
    });
    const env = { IBATCH_TRAINING_ESTIMATE: '100' };

    // First the balance refuses the training (402): a run exists, nothing is charged.
    await em.admin.setCredits(em.accounts[0]!.id, 50);
    const refused = await ibatch(em, job, ['run', job], env);
    expect(refused.code, refused.stderr).toBe(3);
    expect((await charges(em)).ledger).toHaveLength(0);
    const before = await status(em, job, env);
    expect(before.trainingPrice).toEqual({ credits: 100, estimated: true, source: 'environment' });
    expect(before.text).toMatch(/training price: 100 estimated/);

    // Then the service charges its own price, above the 100 reserved.
    await em.admin.setCredits(em.accounts[0]!.id, 10_000);
    const over = await ibatch(em, job, ['run', job], env);
    expect(over.code, `${over.stdout}\n${over.stderr}`).toBe(3);
    expect(`${over.stdout}\n${over.stderr}`).toMatch(/budget reached/);
    const { trainings, generationIds } = await charges(em);
    expect(trainings.map((t) => t.amount)).toEqual([TRAINING_COST]);
    expect(generationIds).toHaveLength(0);

    const after = await status(em, job, env);
    expect(after.trainingPrice).toEqual({
      credits: TRAINING_COST,
      estimated: false,
      source: 'last-charge',
    });
    expect(after.text).toMatch(
      new RegExp(`training price: ${TRAINING_COST} \\(the last training charge`),
    );
    expect(after.text).not.toMatch(/training price: .*estimated/);
    expect(after.job.spend.net).toBe(TRAINING_COST);
    expect(after.job.remaining).toBe(150 - TRAINING_COST);

    const plan = await planPrice(em, job, env);
    expect(plan.trainingPrice).toEqual({
      credits: TRAINING_COST,
      estimated: false,
      source: 'last-charge',
    });
  }, 120_000);
});
