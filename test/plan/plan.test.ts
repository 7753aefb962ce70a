/**
 * `plan` against a real emulator: every item of the shipped jobs is quoted
 * (stand-ins included) at exactly the emulator's own pricing, each price
 * class is quoted once, nothing is charged, the exit code follows the
 * verdict, and a service that resolves references while quoting leaves
 * stand-in items "priced at run time" instead of failing the plan.
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { priceOf, type RunningEmulator } from '../../src/emulator/index.js';
import { validateJob } from '../../src/job/index.js';
import {
  ASSUMED_TRAINING_PRICE,
  priceClassOf,
  quoteRequestOf,
  SOURCE_GENERATION_STAND_IN,
} from '../../src/plan/index.js';
import { emulatorEnv, REPO, runCliCaptured, tempDir, testEmulator } from '../helpers/index.js';
import { emulatorCatalog } from '../job/helpers.js';

/**
 * Preview calls per shipped job. Before one quoting rule the plan quoted each
 * distinct request (3, 9 and 7); requests that differ only in prompt text or
 * media identity now share their price class's one quote.
 */
const JOBS: Record<string, number> = {
  'jobs/quickstart.yaml': 2,
  'examples/product-campaign/campaign.yaml': 5,
  'examples/influencer-series/series.yaml': 3,
  'examples/picked-clips/picked.yaml': 2,
};

interface PlanDoc {
  total: number;
  budget: number | null;
  balance: number;
  quotes: number;
  trainings: { count: number; price: number; cost: number };
  steps: Array<{
    id: string;
    items: number;
    outputs: number;
    cost: number;
    unquoted: number;
    unquotedReason?: string;
  }>;
}

describe('plan on the emulator', () => {
  let emulator: RunningEmulator;
  let env: NodeJS.ProcessEnv;
  let work: string;

  beforeAll(async () => {
    emulator = await testEmulator();
    env = emulatorEnv(emulator);
    // Copies, so the model cache written beside each job stays out of the repo;
    // without what a demo run left beside the jobs (its journal and outputs,
    // git-ignored), which the plan would otherwise read as work already done.
    work = tempDir('plan');
    const leftByRuns = new Set(['.ibatch', 'out']);
    for (const folder of ['jobs', 'examples', 'schema'])
      cpSync(join(REPO, folder), join(work, folder), {
        recursive: true,
        filter: (source) => !leftByRuns.has(basename(source)),
      });
  });

  for (const [job, expectedQuotes] of Object.entries(JOBS)) {
    it(`${job}: plan --emulator quotes every item at exactly priceOf, once per price class`, async () => {
      const run = await runCliCaptured(['plan', job, '--emulator', '--json'], {}, work);
      expect(run.code, run.stderr).toBe(0);
      const plan = JSON.parse(run.stdout) as PlanDoc;
      const { job: loaded, items } = await validateJob(join(work, job), {
        models: emulatorCatalog(),
      });
      const catalog = emulatorCatalog();
      const distinct = new Set(
        items.map((i) => {
          const request = quoteRequestOf(i);
          return priceClassOf(catalog, request.modelId, request.body);
        }),
      );
      expect(plan.quotes).toBe(distinct.size);
      expect(plan.quotes).toBe(expectedQuotes);
      expect(plan.steps.map((s) => s.id)).toEqual(loaded.steps.map((s) => s.id));
      for (const step of plan.steps) {
        const stepItems = items.filter((i) => i.stepId === step.id);
        expect(step.items).toBe(stepItems.length);
        expect(step.unquoted, `${step.id}: ${step.unquotedReason}`).toBe(0);
        const expected = stepItems.reduce((sum, i) => sum + priceOf(i.modelId, i.request).cost, 0);
        expect(step.cost).toBeCloseTo(expected, 6);
      }
      // Trainings are in the total: no journal yet, so each at the published price.
      const all = items.reduce((sum, i) => sum + priceOf(i.modelId, i.request).cost, 0);
      const trainings = loaded.influencers.size * ASSUMED_TRAINING_PRICE;
      expect(plan.total).toBeCloseTo(all + trainings, 6);
      expect(plan.trainings).toMatchObject({ count: loaded.influencers.size, cost: trainings });

      const text = await runCliCaptured(['plan', job, '--emulator'], {}, work);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).not.toMatch(/at run time/);
      expect(text.stdout).toMatch(new RegExp(`quotes\\s+${distinct.size} `));
    });
  }

  it('quotes from: items with the stand-in source and keeps job-local influencers out', async () => {
    const { items } = await validateJob(join(work, 'examples/influencer-series/series.yaml'), {
      models: emulatorCatalog(),
    });
    const clips = items.filter((i) => i.source !== undefined);
    expect(clips.length).toBeGreaterThan(0);
    for (const clip of clips) {
      expect(quoteRequestOf(clip).body.generationId).toBe(SOURCE_GENERATION_STAND_IN);
      expect(quoteRequestOf(clip).hasStandIns).toBe(true);
    }
    const photo = items.find((i) => i.stepId === 'photos');
    expect(photo && quoteRequestOf(photo).body).not.toHaveProperty('influencerId');
    expect(items.every((i) => i.source !== undefined || !quoteRequestOf(i).body.generationId)).toBe(
      true,
    );
  });

  it('falls back to "priced at run time" when preview resolves references (strict mode)', async () => {
    const strict = await testEmulator({ behaviour: { previewChecksReferences: true } });
    const strictEnv = emulatorEnv(strict);
    const job = 'examples/influencer-series/series.yaml';
    const run = await runCliCaptured(['plan', job, '--json'], strictEnv, work);
    expect(run.code, run.stderr).toBe(0);
    const plan = JSON.parse(run.stdout) as PlanDoc;
    const byId = Object.fromEntries(plan.steps.map((s) => [s.id, s]));
    // The stand-in source is unknown (404) and the placeholder URL is no owned asset (400).
    expect(byId.clips).toMatchObject({ items: 6, unquoted: 6, cost: 0 });
    expect(byId.clips?.unquotedReason).toMatch(/generationId/);
    expect(byId.retouch).toMatchObject({ items: 1, unquoted: 1, cost: 0 });
    expect(byId.retouch?.unquotedReason).toMatch(/^input\.image/);
    expect(byId.photos).toMatchObject({ unquoted: 0, cost: 24 });
    expect(plan.total).toBe(24 + ASSUMED_TRAINING_PRICE); // and the series' one training
    const text = await runCliCaptured(['plan', job], strictEnv, work);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/6 item\(s\) of clips can only be priced at run time/);
    expect(await strict.admin.ledger()).toEqual([]);
  });

  it('exits 3 when the total exceeds the budget, and charges nothing', async () => {
    const file = join(work, 'jobs', 'over-budget.yaml');
    const text = readFileSync(join(work, 'jobs', 'quickstart.yaml'), 'utf8');
    writeFileSync(file, text.replace('budget: 200', 'budget: 1'));
    const run = await runCliCaptured(['plan', 'jobs/over-budget.yaml'], env, work);
    expect(run.code).toBe(3);
    expect(run.stdout).toMatch(/OVER BUDGET/);
    expect(await emulator.admin.ledger()).toEqual([]);
  });
});
