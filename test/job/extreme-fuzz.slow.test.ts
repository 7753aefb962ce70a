/**
 * Job files asking for extreme sizes: matrix products (also
 * built from YAML aliases), row counts, rows files that are not regular files
 * or are huge, upload globs rooted anywhere. Each runs through the real CLI
 * `validate` in a child process and must end within 10 s, with exit 0 or 2
 * (the one the ceilings predict) and a peak RSS under 300 MB. Needs
 * `npm run build`.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_JOB_LIMITS } from '../../src/job/index.js';
import { BIN, cleanEnv, runCommand, tempDir } from '../helpers/index.js';

const DEADLINE_MS = 10_000;
const MAX_RSS_MB = 300;
const RSS_MARK = 'ibatch-test-max-rss-kib=';
/** Preloaded into the CLI: prints the process's peak RSS (KiB) as it exits. */
const RSS_HOOK = `data:text/javascript,process.on('exit',()=>process.stderr.write('\\n${RSS_MARK}'+process.resourceUsage().maxRSS+'\\n'))`;
const MAX_ITEMS = DEFAULT_JOB_LIMITS.maxItems;

/** A job file to write into a fresh folder, and the exit code the ceilings predict. */
interface Case {
  readonly label: string;
  write(dir: string): void;
  readonly exit: 0 | 2;
}

const head = (lines: string[]) => ['version: 1', 'name: extreme', ...lines, ''].join('\n');
const step = (lines: string[]) => [
  'generations:',
  '  - id: a',
  '    model: sdxl-lite',
  ...lines.map((line) => `    ${line}`),
];
const TEN = '[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]';

const matrixCase = fc
  .record({
    lengths: fc.array(fc.integer({ min: 1, max: 10 }), { minLength: 1, maxLength: 8 }),
    count: fc.constantFrom(1, 3, 1000),
  })
  .map(({ lengths, count }): Case => {
    const axes = lengths.map((n, i) => `  a${i}: [${Array.from({ length: n }, (_, v) => v)}]`);
    const items = lengths.reduce((p, n) => p * n, 1) * count;
    return {
      label: `matrix ${lengths.join('x')} x count ${count} = ${items}`,
      write: (dir) =>
        writeFileSync(
          join(dir, 'job.yaml'),
          head(step([`count: ${count}`, 'input: { prompt: "{{ a0 }}" }', 'matrix:', ...axes])),
        ),
      exit: items > MAX_ITEMS ? 2 : 0,
    };
  });

/** `a0: &ten [...]` and every other axis `*ten`: 1.3 KB of YAML for 10^axes items. */
const aliasCase = fc.integer({ min: 1, max: 12 }).map((axes): Case => {
  const lines = Array.from({ length: axes }, (_, i) =>
    i === 0 ? `  a0: &ten ${TEN}` : `  a${i}: *ten`,
  );
  const items = 10 ** axes;
  return {
    label: `aliased matrix 10^${axes}`,
    write: (dir) =>
      writeFileSync(
        join(dir, 'job.yaml'),
        head(step(['input: { prompt: "{{ a0 }}" }', 'matrix:', ...lines])),
      ),
    exit: items > MAX_ITEMS ? 2 : 0,
  };
});

const rowsCase = fc
  .record({ rows: fc.constantFrom(1, 999, 30_000, 300_000), count: fc.constantFrom(1, 10, 1000) })
  .map(
    ({ rows, count }): Case => ({
      label: `${rows} rows x count ${count}`,
      write: (dir) => {
        writeFileSync(
          join(dir, 'rows.csv'),
          `n\n${Array.from({ length: rows }, (_, i) => i).join('\n')}\n`,
        );
        writeFileSync(
          join(dir, 'job.yaml'),
          head(step(['rows: rows.csv', `count: ${count}`, 'input: { prompt: "{{ n }}" }'])),
        );
      },
      exit: rows * count > MAX_ITEMS ? 2 : 0,
    }),
  );

/** Rows files that must be refused before a byte is read. */
const rowsFileCase = fc
  .constantFrom<Case>(
    {
      label: 'rows file: a 100 GB sparse file',
      write: (dir) => {
        writeFileSync(join(dir, 'rows.csv'), '');
        truncateSync(join(dir, 'rows.csv'), 100 * 2 ** 30);
      },
      exit: 2,
    },
    {
      label: 'rows file: /dev/zero',
      write: (dir) => symlinkSync('/dev/zero', join(dir, 'rows.csv')),
      exit: 2,
    },
    {
      label: 'rows file: a FIFO nobody writes',
      write: (dir) => execFileSync('mkfifo', [join(dir, 'rows.csv')]),
      exit: 2,
    },
    {
      label: 'rows file: a directory',
      write: (dir) => mkdirSync(join(dir, 'rows.csv')),
      exit: 2,
    },
  )
  .map(
    (files): Case => ({
      ...files,
      write: (dir) => {
        files.write(dir);
        writeFileSync(
          join(dir, 'job.yaml'),
          head(step(['rows: rows.csv', 'input: { prompt: "{{ n }}" }'])),
        );
      },
    }),
  );

const globCase = fc
  .constantFrom(
    '/**/*.png',
    '/*',
    '../**/*.png',
    '../../../**',
    'refs/../../**/*',
    '**/*.png',
    'refs/*.png',
  )
  .map(
    (glob): Case => ({
      label: `upload glob ${glob}`,
      write: (dir) => {
        mkdirSync(join(dir, 'refs'));
        writeFileSync(join(dir, 'refs', 'a.png'), 'png');
        writeFileSync(
          join(dir, 'job.yaml'),
          head([
            'uploads:',
            '  refs:',
            `    files: [${JSON.stringify(glob)}]`,
            ...step(['input: { prompt: hi }']),
          ]),
        );
      },
      exit: glob.startsWith('/') || glob.split('/').includes('..') ? 2 : 0,
    }),
  );

describe('job files asking for extreme sizes', () => {
  it('validate ends in < 10 s with exit 0 or 2 and < 300 MB', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(matrixCase, aliasCase, rowsCase, rowsFileCase, globCase),
        async (c) => {
          const dir = tempDir('extreme');
          c.write(dir);
          const started = performance.now();
          const run = await runCommand(
            process.execPath,
            ['--import', RSS_HOOK, BIN, 'validate', 'job.yaml', '--emulator', '--json'],
            { cwd: dir, env: cleanEnv(), timeoutMs: DEADLINE_MS },
          );
          const ms = performance.now() - started;
          const context = `${c.label}: ${Math.round(ms)} ms\n${run.stderr.slice(0, 2000)}`;
          expect(run.signal, context).toBeNull();
          expect(ms, context).toBeLessThan(DEADLINE_MS);
          expect(run.code, context).toBe(c.exit);
          if (c.exit === 2) expect(run.stderr, context).toContain('nothing was spent');
          const rss = run.stderr
            .split('\n')
            .find((line) => line.startsWith(RSS_MARK))
            ?.slice(RSS_MARK.length);
          expect(rss, context).toBeDefined();
          expect(Number(rss) / 1024, context).toBeLessThan(MAX_RSS_MB);
        },
      ),
      // Each case is a fresh CLI process (~1 s): enough to meet every kind a
      // few times while the file stays well under a minute on 2 cores.
      { numRuns: 30 },
    );
  }, 180_000);
});
