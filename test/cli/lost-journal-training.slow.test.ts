/**
 * A lost journal with a job-local influencer (interface: "Re-running", lost
 * journal): `plan` counts the adopted manifest as `run` does, and a training
 * is made only when an item still to be made needs its influencer. The
 * manifest names the influencer its rows were made with, so after a lost
 * journal it is reused while the account lists it, not trained again. The
 * emulator's ledger and its training counter are the judge; every command
 * is a real `ibatch` process (`npm run build` first).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { priceOf, type RunningEmulator } from '../../src/emulator/index.js';
import { ASSUMED_TRAINING_PRICE } from '../../src/plan/index.js';
import {
  type Exit,
  emulatorEnv,
  manifestRows,
  said,
  scaledLimits,
  spawnCli,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { charges, REF_COLOURS, SCALE } from '../scheduler/fixtures/pipeline/helpers.js';
import { ledgerNet } from '../scheduler/helpers.js';
import { makePng } from '../uploads/fixtures/media-samples.js';

interface PlanDoc {
  total: number;
  trainings: { count: number; cost: number; reused: number };
  steps: { id: string; new: number; done: number }[];
}

interface Row {
  item: string;
  step: string;
  file?: string;
  influencer?: string;
  influencerId?: string;
  influencerConfig?: string;
}

const PHOTO = priceOf('flux-portrait', { input: { prompt: 'x', aspectRatio: '9:16' } }).cost;

/** A job training `mia` from three local images; `photos` uses her for each scene (when given). */
function jobText(scenes: readonly string[] | undefined, username?: string): string {
  const lines = [
    'version: 1',
    'name: lost-training',
    'output: out',
    'uploads:',
    '  refs: { files: ["refs/*.png"] }',
    'influencers:',
    `  mia: { name: Mia Lost, ${username ? `username: ${username}, ` : ''}style: realistic, gender: female, images: refs, consentAcknowledged: true }`,
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    '    matrix: { scene: [harbour, market] }',
    '    input: { prompt: "a quiet {{ scene }}" }',
  ];
  if (scenes) {
    lines.push(
      '  - id: photos',
      '    model: flux-portrait',
      '    influencer: mia',
      `    matrix: { scene: [${scenes.join(', ')}] }`,
      '    input: { prompt: "Mia on a {{ scene }}", aspectRatio: "9:16" }',
    );
  }
  return `${lines.join('\n')}\n`;
}

function workspace(scenes: readonly string[] | undefined, username?: string) {
  const dir = tempDir('lost-training');
  mkdirSync(path.join(dir, 'refs'));
  REF_COLOURS.forEach((rgb, i) => {
    writeFileSync(path.join(dir, 'refs', `ref-${i + 1}.png`), makePng(48 + i * 8, 48, rgb));
  });
  const job = path.join(dir, 'job.yaml');
  writeFileSync(job, jobText(scenes, username));
  return {
    dir,
    job,
    rows: () => manifestRows<Row>(path.join(dir, 'out', 'manifest.jsonl')),
    loseJournal: () => rmSync(path.join(dir, '.ibatch'), { recursive: true }),
  };
}

/** `ibatch ARGS` as a real process in the job's folder (needs `npm run build`). */
function ibatch(job: string, env: NodeJS.ProcessEnv, ...args: string[]): Promise<Exit> {
  return spawnCli(args, { cwd: path.dirname(job), env }).exited;
}

/** `ibatch run JOB` with limits matching the emulator's time scale. */
const runJob = (job: string, env: NodeJS.ProcessEnv) =>
  ibatch(job, env, 'run', job, '--limits', scaledLimits(SCALE));

async function plan(env: NodeJS.ProcessEnv, job: string): Promise<PlanDoc> {
  const result = await ibatch(job, env, 'plan', job, '--json');
  expect(result.code, said(result)).toBe(0);
  return JSON.parse(result.stdout) as PlanDoc;
}

/** Trainings the emulator was asked to create for an account. */
async function trainingsCreated(em: RunningEmulator, account = 0): Promise<number> {
  const stats = await em.admin.stats();
  return stats.accounts.find((a) => a.id === em.accounts[account]?.id)?.counters.trainings ?? 0;
}

/** An account's net spend on the ledger (charges - refunds). */
async function netOf(em: RunningEmulator, account: number): Promise<number> {
  const ledger = await em.admin.ledger(em.accounts[account]?.id);
  return ledger.reduce((sum, e) => sum + (e.type === 'charge' ? e.amount : -e.amount), 0);
}

describe('a lost journal with a trained influencer', () => {
  it('plan total = what run charges = 0, no training; a new scene: its price, the influencer reused', async () => {
    const em = await testEmulator({ timeScale: SCALE, seed: 7 });
    const env = emulatorEnv(em);
    const ws = workspace(['beach', 'rooftop']);
    const first = await runJob(ws.job, env);
    expect(first.code, said(first)).toBe(0);
    expect((await charges(em)).trainings).toHaveLength(1);
    expect(await trainingsCreated(em)).toBe(1);

    // The photos' rows name the influencer they were made with; the shots' do not.
    const made = ws.rows();
    const photos = made.filter((r) => r.step === 'photos');
    expect(photos).toHaveLength(2);
    const [influencerId] = new Set(photos.map((r) => r.influencerId));
    expect(influencerId).toMatch(/^[0-9a-f-]{36}$/);
    for (const row of photos)
      expect(row).toMatchObject({ influencer: 'mia', influencerConfig: expect.any(String) });
    for (const row of made.filter((r) => r.step === 'shots'))
      expect(row.influencerId).toBeUndefined();

    ws.loseJournal();
    const spent = await ledgerNet(em);
    const quoted = await plan(env, ws.job);
    expect(quoted.total).toBe(0);
    expect(quoted.trainings).toMatchObject({ count: 0, cost: 0 });
    const again = await runJob(ws.job, env);
    expect(again.code, said(again)).toBe(0);
    expect(said(again)).toMatch(/adopted 4 item\(s\) from manifest\.jsonl/);
    expect(await ledgerNet(em)).toBe(spent);
    expect(await trainingsCreated(em)).toBe(1);

    // A new scene needs mia: after another lost journal, only its photo is paid.
    writeFileSync(ws.job, jobText(['beach', 'rooftop', 'forest']));
    ws.loseJournal();
    const next = await plan(env, ws.job);
    expect(next.total).toBe(PHOTO);
    expect(next.trainings).toMatchObject({ count: 0, cost: 0, reused: 1 });
    expect(next.steps.find((s) => s.id === 'photos')).toMatchObject({ new: 1, done: 2 });
    const added = await runJob(ws.job, env);
    expect(added.code, said(added)).toBe(0);
    expect(said(added)).toMatch(/adopted influencer mia/);
    expect((await ledgerNet(em)) - spent).toBe(next.total);
    expect(await trainingsCreated(em)).toBe(1);
    const forest = ws.rows().find((r) => r.step === 'photos' && r.item.includes('forest'));
    expect(forest?.influencerId).toBe(influencerId);
  }, 120_000);

  it('an item needs the influencer and no manifest row names it: plan quotes one training, run trains once', async () => {
    const em = await testEmulator({ timeScale: SCALE, seed: 8 });
    const env = emulatorEnv(em);
    // No item uses mia yet: she is not trained.
    const ws = workspace(undefined);
    const first = await runJob(ws.job, env);
    expect(first.code, said(first)).toBe(0);
    expect(await trainingsCreated(em)).toBe(0);

    writeFileSync(ws.job, jobText(['beach', 'rooftop']));
    ws.loseJournal();
    const spent = await ledgerNet(em);
    const quoted = await plan(env, ws.job);
    expect(quoted.trainings).toMatchObject({ count: 1, cost: ASSUMED_TRAINING_PRICE });
    expect(quoted.total).toBe(ASSUMED_TRAINING_PRICE + 2 * PHOTO);
    expect(quoted.steps.find((s) => s.id === 'shots')).toMatchObject({ new: 0, done: 2 });
    const trained = await runJob(ws.job, env);
    expect(trained.code, said(trained)).toBe(0);
    expect((await ledgerNet(em)) - spent).toBe(quoted.total);
    expect(await trainingsCreated(em)).toBe(1);
    expect(readFileSync(path.join(ws.dir, 'out', 'manifest.jsonl'), 'utf8')).not.toMatch(
      new RegExp(em.accounts[0]!.apiKey),
    );
  }, 120_000);

  it('a job-local username the lost journal trained: not a conflict, reused, nothing paid', async () => {
    const em = await testEmulator({ timeScale: SCALE, seed: 9 });
    const env = emulatorEnv(em);
    const ws = workspace(['beach'], 'mia_lost');
    const first = await runJob(ws.job, env);
    expect(first.code, said(first)).toBe(0);
    ws.loseJournal();
    const spent = await ledgerNet(em);
    expect((await plan(env, ws.job)).total).toBe(0);
    const again = await runJob(ws.job, env);
    expect(again.code, said(again)).toBe(0);
    expect(await ledgerNet(em)).toBe(spent);
    expect(await trainingsCreated(em)).toBe(1);
  }, 120_000);

  it('the account does not list the influencer of the manifest: not reused; a scene needing her trains once, as quoted', async () => {
    const em = await testEmulator({ timeScale: SCALE, seed: 10 });
    const ws = workspace(['beach']);
    const first = await runJob(ws.job, emulatorEnv(em, 0));
    expect(first.code, said(first)).toBe(0);

    // The same folder, another account (another key): its list has no mia.
    const other = emulatorEnv(em, 1);
    ws.loseJournal();
    expect((await plan(other, ws.job)).total).toBe(0);
    writeFileSync(ws.job, jobText(['beach', 'forest']));
    const quoted = await plan(other, ws.job);
    expect(quoted.trainings).toMatchObject({ count: 1, cost: ASSUMED_TRAINING_PRICE, reused: 0 });
    expect(quoted.total).toBe(ASSUMED_TRAINING_PRICE + PHOTO);
    const trained = await runJob(ws.job, other);
    expect(trained.code, said(trained)).toBe(0);
    expect(said(trained)).toMatch(
      /influencer mia \([0-9a-f-]+\) in manifest\.jsonl is not on this account: not reused/,
    );
    expect(await netOf(em, 1)).toBe(quoted.total);
    expect(await trainingsCreated(em, 1)).toBe(1);
    expect(await trainingsCreated(em, 0)).toBe(1);
  }, 120_000);
});
