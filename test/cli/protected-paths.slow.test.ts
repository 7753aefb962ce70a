/**
 * Protected paths and the run id, end to end: an output may never land on the journal
 * (or its companions, the model cache, the job file or its inputs), and
 * `--run-id` must be non-empty printable text of at most 100 characters.
 * Real `ibatch` processes against a real emulator over loopback HTTP.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { runCliCaptured, spawnCli, testEmulator } from '../helpers/index.js';
import { charges, envFor, imageJob, workspace } from '../scheduler/helpers.js';

const SCALE = 30;

/** A one-item image job writing `filename` into `output`. */
function jobWith(output: string, filename: string, scene = 's1'): string {
  return [
    'version: 1',
    'name: guard-job',
    `output: ${output}`,
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    `    filename: "${filename}"`,
    '    matrix:',
    `      scene: [${scene}]`,
    '    input:',
    '      prompt: "a quiet street {{ scene }}"',
    '',
  ].join('\n');
}

describe('outputs never land on the journal or the inputs', () => {
  it('validate refuses `output: .ibatch` + `filename: journal.db` (exit 2, at output:)', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(jobWith('.ibatch', 'journal.db'));
    const result = await runCliCaptured(['validate', 'job.yaml'], envFor(em, SCALE), ws.dir);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/job\.yaml:3:9 {2}output {2}.*journal/);
  });

  it('validate refuses a fixed file name that is the job file itself', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(jobWith('.', 'job.yaml'));
    const result = await runCliCaptured(['validate', 'job.yaml'], envFor(em, SCALE), ws.dir);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/job\.yaml:7:15 {2}generations\[0\]\.filename {2}.*job\.yaml/);
  });

  it('validate accepts outputs in the job folder whose names cannot be an input', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(jobWith('.', '{step}/{item}-{n}.{ext}'));
    const result = await runCliCaptured(['validate', 'job.yaml'], envFor(em, SCALE), ws.dir);
    expect(result.code, result.stderr).toBe(0);
  });

  it('plan refuses a `--journal` inside the output folder, as run does (exit 2, nothing spent)', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(jobWith('out', '{item}.{ext}'));
    const env = envFor(em, SCALE);
    const args = ['job.yaml', '--journal', 'out/journal.db'];
    const plan = await runCliCaptured(['plan', ...args], env, ws.dir);
    const run = await runCliCaptured(['run', ...args], env, ws.dir);
    for (const result of [plan, run]) {
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/output folder out is or is inside out/);
    }
    expect(await charges(em)).toHaveLength(0);
  });

  it('run refuses `--out .ibatch` (the journal folder) before spending anything', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(jobWith('out', 'journal.db'));
    const env = envFor(em, SCALE);
    const result = await runCliCaptured(['run', 'job.yaml', '--out', '.ibatch'], env, ws.dir);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/output folder \.ibatch is or is inside/);
    expect(await charges(em)).toHaveLength(0);
  });

  it('run refuses to write a PNG over the journal: the journal survives and records the charge', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    // Only the item's value makes the name `journal.db`: validate cannot know,
    // the writer's check at write time is what stops it.
    const ws = workspace(jobWith('out', 'state/{scene}.db', 'journal'));
    const journal = path.join(ws.dir, 'out', 'state', 'journal.db');
    const env = envFor(em, SCALE);
    const run = spawnCli(['run', 'job.yaml', '--journal', journal], { env, cwd: ws.dir });
    const exit = await run.exited;
    expect(exit.code, run.stderr()).toBe(1);
    expect(run.stdout() + run.stderr()).toMatch(
      /refused to write .*journal\.db: it is the protected file/,
    );
    expect(readFileSync(journal).subarray(0, 15).toString()).toBe('SQLite format 3');
    const opened = await openJournal(journal, { readonly: true });
    try {
      const [record] = opened.listRuns();
      expect(record?.status).toBe('completed_with_failures');
      const item = opened.listItems(record?.runId ?? '')[0];
      expect(item?.state).toBe('failed');
      expect(item?.error).toMatch(/protected file/);
      // The journal still holds what was charged: the same as the service's ledger.
      const ledger = await charges(em);
      expect(ledger).toHaveLength(1);
      expect(opened.spendSummary(record?.runId ?? '').charged).toBe(ledger[0]?.amount);
    } finally {
      opened.close();
    }
    const status = await runCliCaptured(['status', 'job.yaml', '--journal', journal], env, ws.dir);
    expect(status.code, status.stderr).toBe(0);
  }, 60_000);
});

describe('--run-id is checked', () => {
  const bad: Array<[string, string]> = [
    ['empty', ''],
    ['a newline', 'a\nb'],
    ['5,000 characters', 'x'.repeat(5000)],
    ['101 characters', 'x'.repeat(101)],
  ];
  for (const [what, id] of bad) {
    it(`refuses ${what} (exit 2, one line, nothing spent)`, async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(imageJob({ name: 'run-id-job', n: 1 }));
      const env = envFor(em, SCALE);
      const result = await runCliCaptured(['run', 'job.yaml', '--run-id', id], env, ws.dir);
      expect(result.code, result.stderr).toBe(2);
      expect(result.stderr).toMatch(/Expected `--run-id` to be/);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(await charges(em)).toHaveLength(0);
    });
  }

  it('accepts 100 printable characters', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(imageJob({ name: 'run-id-ok', n: 1 }));
    const id = `ci-${'x'.repeat(97)}`;
    const env = envFor(em, SCALE);
    const result = await runCliCaptured(['run', 'job.yaml', '--run-id', id], env, ws.dir);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`run ${id}`);
    expect(await charges(em)).toHaveLength(1);
  });
});
