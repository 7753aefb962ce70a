/**
 * One figure for spend: a job with a training, a `copies: 2` step, a refunded
 * generation and two runs, each command a real `ibatch` process against the
 * emulator. `costs --json`, `status --json`, the report's job line and the
 * review listing (`review --json`, what the page shows) all say what the
 * emulator's ledger charged and refunded, the training included (and
 * `plan` weighs the next run against the same budget left); `costs`
 * counts one generation per charged create (the ledger's charges), not one
 * per output file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { LedgerEntry, RunningEmulator } from '../../src/emulator/index.js';
import { canonicalServiceUrl } from '../../src/shared/index.js';
import { emulatorEnv, scaledLimits, spawnCli, tempDir } from '../helpers/index.js';
import { emulators, makeWorkspace, SCALE } from '../scheduler/fixtures/pipeline/helpers.js';

const JOB = `version: 1
name: spend-figures
output: out
budget: 2000
uploads:
  refs: { files: ["refs/*.png"] }
influencers:
  mia: { name: Mia Figures, style: realistic, gender: female, images: refs, consentAcknowledged: true }
generations:
  - id: photos
    model: flux-portrait
    influencer: mia
    copies: 2
    matrix: { scene: [SCENES] }
    input: { prompt: "Mia on a {{ scene }}", aspectRatio: "9:16" }
`;

let em: RunningEmulator;
let dir: string;
let job: string;
let env: NodeJS.ProcessEnv;
let ledger: LedgerEntry[];

/** `ibatch ARGS` as a real process; its exit code and output. */
async function ibatch(args: readonly string[]) {
  const exit = await spawnCli(args, { cwd: dir, env }).exited;
  return { code: exit.code, stdout: exit.stdout, stderr: exit.stderr };
}

async function runJob(): Promise<void> {
  const result = await ibatch(['run', job, '--limits', scaledLimits(SCALE)]);
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
}

const sum = (entries: readonly LedgerEntry[]) =>
  Math.round(entries.reduce((s, e) => s + e.amount, 0) * 100) / 100;

/** What the ledger says the job cost: charged, refunded, net, and its charges by kind. */
function fromLedger() {
  const charges = ledger.filter((e) => e.type === 'charge');
  const charged = sum(charges);
  const refunded = sum(ledger.filter((e) => e.type === 'refund'));
  return {
    charged,
    refunded,
    net: Math.round((charged - refunded) * 100) / 100,
    generations: charges.filter((e) => !e.trainingId).length,
    trainings: charges.filter((e) => e.trainingId).length,
    files: charges.reduce((n, e) => n + (e.generationIds?.length ?? 0), 0),
  };
}

beforeAll(async () => {
  em = await emulators({ seed: 23 });
  env = emulatorEnv(em);
  dir = tempDir('spend-figures');
  job = makeWorkspace(dir, 'job.yaml');
  writeFileSync(job, JOB.replace('SCENES', 'beach, rooftop'));
  // One generation of the first run fails and is refunded (then retried).
  await em.admin.scriptFaults([
    { endpoint: 'createGeneration', fault: 'generation-fail', times: 1 },
  ]);
  await runJob();
  // A second run: one scene added.
  writeFileSync(job, JOB.replace('SCENES', 'beach, rooftop, park'));
  await runJob();
  ledger = await em.admin.ledger(em.accounts[0]!.id);
}, 180_000);

describe('one figure for spend, the ledger as the judge', () => {
  it('the fixture has a training, a refund, two copies per create and two runs', async () => {
    const expected = fromLedger();
    expect(expected.trainings).toBe(1);
    expect(expected.refunded).toBeGreaterThan(0);
    expect(expected.files).toBe(2 * expected.generations);
    const status = JSON.parse((await ibatch(['status', job, '--json'])).stdout) as {
      runs: unknown[];
    };
    expect(status.runs).toHaveLength(2);
  });

  it('costs --json: charged generations (not files), trainings and credits equal the ledger', async () => {
    const result = await ibatch(['costs', job, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      total: {
        charged: number;
        refunded: number;
        net: number;
        generations: number;
        trainings: number;
      };
      standings: unknown[];
    };
    const { files: _, ...expected } = fromLedger();
    expect(doc.total).toEqual(expected);
    // The job's budget standing on the emulator: the same figures, and what is left.
    const { charged, refunded, net } = expected;
    expect(doc.standings).toEqual([
      {
        service: canonicalServiceUrl(em.baseUrl),
        budget: 2000,
        charged,
        refunded,
        net,
        reserved: 0,
        committed: net,
        remaining: 2000 - net,
      },
    ]);
  });

  it('status --json: the job over its runs equals the ledger', async () => {
    const result = await ibatch(['status', job, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as {
      job: {
        spend: { charged: number; refunded: number; net: number; reserved: number };
        remaining: number;
      };
      spend: { remaining: number };
    };
    const { charged, refunded, net } = fromLedger();
    expect(doc.job.spend).toMatchObject({ charged, refunded, net, reserved: 0 });
    expect(doc.job.remaining).toBe(2000 - net);
    expect(doc.spend.remaining).toBe(2000 - net);
  });

  it('plan --json: what earlier runs spent and the budget left equal the ledger', async () => {
    const result = await ibatch(['plan', job, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const doc = JSON.parse(result.stdout) as { spent: number; remaining: number; total: number };
    const { net } = fromLedger();
    expect(doc).toMatchObject({ total: 0, spent: net, remaining: 2000 - net });
  });

  it("the report's job line equals the ledger", () => {
    const html = readFileSync(path.join(dir, 'out', 'report.html'), 'utf8');
    const figure = (attr: string) =>
      Number(new RegExp(`<[^>]*${attr}[^>]*>([\\d.]+) credits?<`).exec(html)?.[1]);
    const { charged, refunded, net } = fromLedger();
    expect({
      charged: figure('data-job-charged'),
      refunded: figure('data-job-refunded'),
      net: figure('data-job-net'),
      remaining: figure('data-job-remaining'),
    }).toEqual({ charged, refunded, net, remaining: 2000 - net });
  });

  it('the review listing (what the page shows) totals the ledger, the training included', async () => {
    const result = await ibatch(['review', job, '--json']);
    expect(result.code, result.stderr).toBe(0);
    const listing = JSON.parse(result.stdout) as {
      spend: { total: { charged: number; refunded: number; net: number } };
    };
    const { charged, refunded, net } = fromLedger();
    expect(listing.spend.total).toMatchObject({ charged, refunded, net });
  });
});
