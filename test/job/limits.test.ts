/**
 * Ceilings on what a job file may ask for: item counts known
 * before anything is expanded, rows and job files that must be regular files
 * under a size ceiling, upload globs kept under the job's folder.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  DEFAULT_JOB_LIMITS,
  expandJob,
  isJobFileError,
  type JobIssue,
  jobLimits,
  loadJob,
  scanJob,
} from '../../src/job/index.js';
import {
  formatCount,
  globRootProblem,
  matrixCombinationBound,
  productOf,
  readRegularFile,
} from '../../src/job/limits.js';
import { readRows } from '../../src/job/rows.js';
import { emulatorEnv, runCliCaptured, tempDir, testEmulator } from '../helpers/index.js';
import { emulatorCatalog } from './helpers.js';

const models = emulatorCatalog();

function errorsOf(run: () => unknown): JobIssue[] {
  try {
    run();
  } catch (error) {
    if (isJobFileError(error)) return error.issues.filter((i) => i.severity === 'error');
    throw error;
  }
  throw new Error('expected a JobFileError');
}

function writeJob(dir: string, body: string): string {
  const file = join(dir, 'job.yaml');
  writeFileSync(file, `version: 1\nname: limits\n${body}`);
  return file;
}

const EIGHT_BY_TEN = Array.from(
  { length: 8 },
  (_, i) => `      a${i}: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]`,
).join('\n');

describe('counting before expanding', () => {
  it('bounds a matrix by the product of its axes plus its includes', () => {
    expect(matrixCombinationBound(undefined)).toBe(1);
    expect(matrixCombinationBound({ a: [1, 2, 3], b: ['x', 'y'] })).toBe(6);
    expect(matrixCombinationBound({ a: [1, 2], exclude: [{ a: 1 }], include: [{ c: 1 }] })).toBe(3);
    expect(matrixCombinationBound({ include: [{ c: 1 }, { c: 2 }] })).toBe(2);
  });

  it('saturates at Infinity instead of losing precision', () => {
    expect(productOf([10, 10, 10])).toBe(1000);
    expect(productOf(Array.from({ length: 400 }, () => 10))).toBe(Number.POSITIVE_INFINITY);
    expect(formatCount(Number.POSITIVE_INFINITY)).toMatch(/^more than 9,007,199,254,740,991$/);
    expect(formatCount(1_000_000)).toBe('1,000,000');
  });

  it('refuses an 8 x 10 matrix at its key without expanding it', () => {
    const dir = tempDir('limits');
    const file = writeJob(
      dir,
      `generations:\n  - id: a\n    model: sdxl-lite\n    input: { prompt: "{{ a0 }}" }\n    matrix:\n${EIGHT_BY_TEN}\n`,
    );
    const job = loadJob(file);
    let made = 0;
    const [issue, ...rest] = errorsOf(() =>
      scanJob(job, models, () => {
        made += 1;
      }),
    );
    // Counted from the matrix's shape: not one of its items is made.
    expect(made).toBe(0);
    expect(rest).toEqual([]);
    expect(issue).toMatchObject({ line: 8, col: 7, path: 'generations[0].matrix' });
    expect(issue?.message).toContain('100,000,000 items');
    expect(issue?.message).toContain('at most 250,000');
    expect(issue?.message).toContain('--max-items');
  });

  it('counts count, copies-made outputs of a from: source and earlier steps against the ceiling', () => {
    const dir = tempDir('limits');
    const file = writeJob(
      dir,
      [
        'generations:',
        '  - id: stills',
        '    model: sdxl-lite',
        '    count: 30',
        '    copies: 4',
        '    input: { prompt: "{{ a }}" }',
        '    matrix: { a: [1, 2, 3, 4, 5] }',
        '  - id: clips',
        '    model: kling-i2v',
        '    from: stills',
        '    count: 2',
        '    input: { prompt: move }',
        '',
      ].join('\n'),
    );
    // stills: 5 x 30 = 150 items, 600 outputs; clips: 600 x 2 = 1,200 items.
    const fits = loadJob(file, { limits: { maxItems: 1350 } });
    expect(expandJob(fits, models).items).toHaveLength(1350);
    const over = loadJob(file, { limits: { maxItems: 1349 } });
    const [issue] = errorsOf(() => scanJob(over, models, () => undefined));
    expect(issue?.path).toBe('generations[1].from');
    expect(issue?.message).toContain('up to 1,200 items (after 150 items of earlier steps)');
    expect(issue?.message).toContain('at most 1,349 items');
  });

  it('stops reading rows at the ceiling and points at `rows:`', () => {
    const dir = tempDir('limits');
    writeFileSync(
      join(dir, 'rows.csv'),
      `n\n${Array.from({ length: 501 }, (_, i) => i).join('\n')}\n`,
    );
    const file = writeJob(
      dir,
      'generations:\n  - id: a\n    model: sdxl-lite\n    rows: rows.csv\n    count: 2\n    input: { prompt: "{{ n }}" }\n',
    );
    const [issue] = errorsOf(() =>
      scanJob(loadJob(file, { limits: { maxItems: 1000 } }), models, () => undefined),
    );
    expect(issue).toMatchObject({ line: 6, col: 11, path: 'generations[0].rows' });
    expect(issue?.message).toContain('rows file rows.csv has more than 500 rows');
    expect(issue?.message).toContain('--max-items');
    // One more item of room and the same file passes.
    const ok = scanJob(loadJob(file, { limits: { maxItems: 1002 } }), models, () => undefined);
    expect(ok.steps).toEqual([{ id: 'a', items: 1002, outputs: 1002 }]);
  });

  it('lets a 100,000-row campaign through the default ceiling', () => {
    const dir = tempDir('limits');
    const path = join(dir, 'rows.jsonl');
    writeFileSync(path, Array.from({ length: 100_000 }, (_, i) => `{"sku":"p${i}"}`).join('\n'));
    expect(readRows(path, 'rows.jsonl', { maxRows: DEFAULT_JOB_LIMITS.maxItems })).toHaveLength(
      100_000,
    );
  });
});

describe('input files must be regular files under a size ceiling', () => {
  it('refuses a FIFO without blocking on it', () => {
    const dir = tempDir('limits');
    const fifo = join(dir, 'rows.csv');
    execFileSync('mkfifo', [fifo]);
    expect(() => readRegularFile(fifo, 'rows file', 1024)).toThrow(/pipe \(FIFO\)/);
  });

  it('refuses /dev/zero (through a link), a directory and a file over the ceiling', () => {
    const dir = tempDir('limits');
    symlinkSync('/dev/zero', join(dir, 'zero.csv'));
    mkdirSync(join(dir, 'folder.csv'));
    writeFileSync(join(dir, 'big.csv'), 'x'.repeat(2048));
    expect(() => readRegularFile(join(dir, 'zero.csv'), 'rows file', 1024)).toThrow(/device/);
    expect(() => readRegularFile(join(dir, 'folder.csv'), 'rows file', 1024)).toThrow(
      /is a directory/,
    );
    expect(() => readRegularFile(join(dir, 'big.csv'), 'rows file', 1024)).toThrow(
      /is 2\.0 KB; a rows file may be at most 1\.0 KB/,
    );
    expect(readRegularFile(join(dir, 'big.csv'), 'rows file', 2048)).toHaveLength(2048);
  });

  it('reports a bad rows file at `rows:` and a bad job file at 1:1', () => {
    const dir = tempDir('limits');
    symlinkSync('/dev/zero', join(dir, 'zero.csv'));
    const file = writeJob(
      dir,
      'generations:\n  - id: a\n    model: sdxl-lite\n    rows: zero.csv\n    input: { prompt: x }\n',
    );
    const [issue] = errorsOf(() => expandJob(loadJob(file), models));
    expect(issue).toMatchObject({ path: 'generations[0].rows' });
    expect(issue?.message).toBe('rows file zero.csv is a device, not a regular file');

    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    expect(errorsOf(() => loadJob(fifo))[0]?.message).toMatch(/job file is a pipe/);
    const huge = join(dir, 'huge.yaml');
    writeFileSync(huge, `# ${'x'.repeat(DEFAULT_JOB_LIMITS.maxJobFileBytes)}\n`);
    expect(errorsOf(() => loadJob(huge))[0]?.message).toMatch(/at most 1\.0 MB/);
  });
});

describe('upload globs stay under the job folder', () => {
  const strict = jobLimits();
  const lax = jobLimits({ allowOutsideJobFolder: true });

  it('refuses absolute and `..` patterns unless allowed', () => {
    for (const glob of ['/**/*.png', '../refs/*.jpg', 'a/../../b/*.png', 'C:/x/*.png', '~/x.png']) {
      expect(globRootProblem(glob, strict), glob).toContain('--allow-outside-job-folder');
      expect(globRootProblem(glob, lax), glob).toBeUndefined();
    }
    for (const glob of ['refs/*.png', '**/*.jpg', 'a..b/*.png', './x.png'])
      expect(globRootProblem(glob, strict), glob).toBeUndefined();
  });

  it('the loader refuses before scanning, and scans with the flag', () => {
    const root = tempDir('limits');
    const dir = join(root, 'job');
    mkdirSync(dir);
    mkdirSync(join(root, 'refs'));
    writeFileSync(join(root, 'refs', 'a.png'), 'png');
    const file = writeJob(
      dir,
      'uploads:\n  refs:\n    files: ["../refs/*.png"]\ngenerations:\n  - id: a\n    model: sdxl-lite\n    input: { prompt: x }\n',
    );
    const [issue] = errorsOf(() => loadJob(file));
    expect(issue).toMatchObject({ line: 5, col: 13, path: 'uploads.refs.files[0]' });
    const job = loadJob(file, { limits: { allowOutsideJobFolder: true } });
    expect(job.uploads.get('refs')?.files).toEqual([join(root, 'refs', 'a.png')]);
  });
});

describe('the flags that raise the ceilings', () => {
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    env = emulatorEnv(await testEmulator());
  });

  it('--max-items raises the item ceiling of validate, plan and run --dry-run', async () => {
    const dir = tempDir('limits');
    writeJob(
      dir,
      'generations:\n  - id: a\n    model: sdxl-lite\n    input: { prompt: "{{ a }} {{ b }}" }\n    matrix: { a: [1, 2, 3], b: [1, 2, 3] }\n',
    );
    for (const command of [['validate'], ['plan'], ['run', '--dry-run']]) {
      const over = await runCliCaptured([...command, 'job.yaml', '--max-items', '8'], env, dir);
      expect(over.code, over.stderr).toBe(2);
      expect(over.stderr).toContain(
        'job.yaml:7:13  generations[0].matrix  step `a` expands to up to 9 items',
      );
      expect(over.stderr).toContain('nothing was spent');
      const fits = await runCliCaptured([...command, 'job.yaml', '--max-items', '9'], env, dir);
      expect(fits.code === 0 || (command[0] !== 'validate' && fits.code === 3), fits.stderr).toBe(
        true,
      );
    }
    const bad = await runCliCaptured(['validate', 'job.yaml', '--max-items', '0'], env, dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Expected `--max-items` to be an integer >= 1, got `0`');
  });

  it('--allow-outside-job-folder lets a `..` glob through', async () => {
    const root = tempDir('limits');
    const dir = join(root, 'job');
    mkdirSync(join(root, 'refs'), { recursive: true });
    mkdirSync(dir);
    writeFileSync(join(root, 'refs', 'a.png'), 'png');
    writeJob(
      dir,
      'uploads:\n  refs:\n    files: ["../refs/*.png"]\ngenerations:\n  - id: a\n    model: sdxl-lite\n    input: { prompt: x }\n',
    );
    const refused = await runCliCaptured(['validate', 'job.yaml'], env, dir);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--allow-outside-job-folder');
    const allowed = await runCliCaptured(
      ['validate', 'job.yaml', '--allow-outside-job-folder'],
      env,
      dir,
    );
    expect(allowed.code, allowed.stderr).toBe(0);
  });
});
