/**
 * Two jobs sharing one output folder (docs/outputs.md allows it): the
 * manifest keeps both jobs' rows whichever runs last (in turn or at the same
 * time), each job has its own report, and the readers of one job (`status`,
 * `export`, `review`, adoption after a lost journal) see only that job. The
 * two jobs have the same step and item keys on purpose: only the manifest's
 * `job` column tells their rows apart. Every command is a real `ibatch`
 * process (`npm run build` first); the emulator's ledger is the judge of
 * what was charged.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import type { ManifestRow } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import {
  type Exit,
  manifestRows,
  parseCsv,
  spawnCli,
  tempDir,
  testEmulator,
} from '../helpers/index.js';
import { charges, envFor, expectOneChargePerItem } from '../scheduler/helpers.js';

const SCALE = 30;
const SCENES = ['s1', 's2', 's3'];

/** Job `name` making one sdxl-lite image per scene into `out/shared`. */
function jobText(name: string, prompt: string): string {
  return [
    'version: 1',
    `name: ${name}`,
    'output: out/shared',
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    `    matrix: { scene: [${SCENES.join(', ')}] }`,
    `    input: { prompt: "${prompt} {{ scene }}" }`,
    '',
  ].join('\n');
}

function workspace() {
  const dir = tempDir('shared-folder');
  writeFileSync(path.join(dir, 'ja.yaml'), jobText('ja', 'a quiet street,'));
  writeFileSync(path.join(dir, 'jb.yaml'), jobText('jb', 'a busy market,'));
  return { dir, out: path.join(dir, 'out', 'shared') };
}

function ibatch(em: RunningEmulator, dir: string, args: readonly string[]): Promise<Exit> {
  return spawnCli(args, { cwd: dir, env: envFor(em, SCALE) }).exited;
}

async function expectOk(exit: Promise<Exit>): Promise<Exit> {
  const done = await exit;
  expect(done.code, done.stderr + done.stdout).toBe(0);
  return done;
}

const rowsOf = (out: string, job: string) =>
  manifestRows<ManifestRow>(path.join(out, 'manifest.jsonl')).filter((r) => r.job === job);

/**
 * Both jobs' current rows, one per scene each, every listed file on disk with
 * its recorded bytes; `rows` in all (more after an adoption: the lost runs'
 * rows stay listed, superseded by the adopted run's).
 */
function expectBothJobs(out: string, rows = 2 * SCENES.length): void {
  const listed = manifestRows<ManifestRow>(path.join(out, 'manifest.jsonl'));
  expect(listed).toHaveLength(rows);
  const current = listed.filter((r) => r.current);
  expect(current.map((r) => r.job).sort()).toEqual(['ja', 'ja', 'ja', 'jb', 'jb', 'jb']);
  for (const row of listed) {
    expect(row.status).toBe('succeeded');
    expect(sha256Hex(readFileSync(path.join(out, row.file ?? '')))).toBe(row.sha256);
  }
  const csv = parseCsv(readFileSync(path.join(out, 'manifest.csv'), 'utf8'));
  expect(csv.records.map((r) => csv.cell(r, 'job'))).toEqual(listed.map((r) => r.job));
}

/** ja, then jb, in one folder; the emulator and the folders. */
async function bothRun() {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace();
  await expectOk(ibatch(em, ws.dir, ['run', 'ja.yaml']));
  const jaFirst = rowsOf(ws.out, 'ja');
  const jb = await expectOk(ibatch(em, ws.dir, ['run', 'jb.yaml']));
  const filesOf = (job: string) => rowsOf(ws.out, job).map((r) => r.file ?? '');
  return { em, ...ws, jaFirst, jb, jaFiles: filesOf('ja'), jbFiles: filesOf('jb') };
}

describe('two jobs in one output folder', () => {
  it('the manifest keeps both jobs’ rows, and each job has its own report', async () => {
    const { em, dir, out, jaFirst, jb, jaFiles, jbFiles } = await bothRun();
    expectBothJobs(out);
    // ja's rows are untouched by jb's run (same content).
    expect(rowsOf(out, 'ja')).toEqual(jaFirst);
    expect(jb.stdout).toContain('report-jb.html');

    // Each job's report shows its own outputs only.
    const jaReport = readFileSync(path.join(out, 'report.html'), 'utf8');
    const jbReport = readFileSync(path.join(out, 'report-jb.html'), 'utf8');
    for (const file of jaFiles) {
      expect(jaReport).toContain(`"${file}"`);
      expect(jbReport).not.toContain(`"${file}"`);
    }
    for (const file of jbFiles) {
      expect(jbReport).toContain(`"${file}"`);
      expect(jaReport).not.toContain(`"${file}"`);
    }
    // `report` rebuilds each job's own report, and the manifest keeps both.
    const ja = await expectOk(ibatch(em, dir, ['report', 'ja.yaml']));
    expect(ja.stdout.trim()).toBe(path.join(out, 'report.html'));
    const jbAgain = await expectOk(ibatch(em, dir, ['report', 'jb.yaml']));
    expect(jbAgain.stdout.trim()).toBe(path.join(out, 'report-jb.html'));
    expectBothJobs(out);
  });

  it('status, review, export and approve of ja see only ja', async () => {
    const { em, dir, out, jaFiles } = await bothRun();
    const status = await expectOk(ibatch(em, dir, ['status', 'ja.yaml', '--json']));
    const shown = JSON.parse(status.stdout) as {
      run: { jobName: string };
      steps: { id: string; done: number }[];
      review: { step: string; unreviewed: number; superseded: number; retired: number }[];
    };
    expect(shown.run.jobName).toBe('ja');
    expect(shown.steps.map((s) => [s.id, s.done])).toEqual([['shots', SCENES.length]]);
    expect(shown.review).toEqual([
      expect.objectContaining({ step: 'shots', unreviewed: SCENES.length, superseded: 0 }),
    ]);
    const review = await expectOk(ibatch(em, dir, ['review', 'ja.yaml', '--json']));
    const listed = (JSON.parse(review.stdout) as { outputs: { file: string }[] }).outputs;
    expect(listed.map((o) => o.file).sort()).toEqual([...jaFiles].sort());
    await expectOk(ibatch(em, dir, ['export', 'ja.yaml', 'handoff']));
    const exported = manifestRows<ManifestRow>(path.join(dir, 'handoff', 'manifest.jsonl'));
    expect(exported.map((r) => r.file).sort()).toEqual([...jaFiles].sort());
    // approve's glob takes ja's outputs only; the rewrite keeps jb's rows as they were.
    const jbBefore = rowsOf(out, 'jb');
    await expectOk(ibatch(em, dir, ['approve', 'ja.yaml', 'shots/*', '--reviewer', 'ana']));
    expect(rowsOf(out, 'ja').map((r) => r.review)).toEqual(['approved', 'approved', 'approved']);
    expect(rowsOf(out, 'jb')).toEqual(jbBefore);
  });

  it('ja’s journal lost after jb ran: ja is adopted from its rows, nothing paid again', async () => {
    const { em, dir, out, jaFiles } = await bothRun();
    const paid = (await charges(em)).length;
    expect(paid).toBe(2 * SCENES.length);
    rmSync(path.join(dir, '.ibatch'), { recursive: true });
    await expectOk(ibatch(em, dir, ['run', 'ja.yaml']));
    expect((await charges(em)).length).toBe(paid);
    expectBothJobs(out, 3 * SCENES.length);
    expect(rowsOf(out, 'jb')).toHaveLength(SCENES.length);
    // Adopted from ja's own rows: jb's items have the same keys, not its files.
    const current = rowsOf(out, 'ja').filter((r) => r.current);
    expect(current.map((r) => r.file).sort()).toEqual([...jaFiles].sort());
  });

  it('two jobs running at the same time both keep their rows', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const { dir, out } = workspace();
    await Promise.all([
      expectOk(ibatch(em, dir, ['run', 'ja.yaml'])),
      expectOk(ibatch(em, dir, ['run', 'jb.yaml'])),
    ]);
    expectOneChargePerItem(await charges(em), 2 * SCENES.length);
    expectBothJobs(out);
  });

  it('two jobs running at the same time, each with its own journal, both keep their rows', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const { dir, out } = workspace();
    // Neither journal knows the other's runs: only the manifest lock and
    // the re-read of replaced files keep the other process's rows.
    await Promise.all([
      expectOk(ibatch(em, dir, ['run', 'ja.yaml', '--journal', 'ja.db'])),
      expectOk(ibatch(em, dir, ['run', 'jb.yaml', '--journal', 'jb.db'])),
    ]);
    expectOneChargePerItem(await charges(em), 2 * SCENES.length);
    expectBothJobs(out);
  });
});
