/**
 * Expand + validate a 10,000-item job (a 2-value matrix times a 5,000-row
 * CSV) against in-memory model contracts. Runs in a child process so its
 * peak RSS (`resourceUsage().maxRSS`) is the job code's alone, not the
 * harness's or another benchmark's.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { validateJob } from '../src/job/index.js';
import { emulatorCatalog } from '../test/job/helpers.js';
import { writeCsvJob } from './csv-job.js';
import type { Benchmark } from './types.js';

const ROWS = 5_000;
const CHILD_FLAG = 'IBATCH_BENCH_JOB_EXPAND_CHILD';

function writeJob(dir: string): string {
  return writeCsvJob(dir, {
    name: 'bench',
    rows: ROWS,
    stepLines: [
      '    matrix:',
      '      format: ["9:16", "1:1"]',
      '    input:',
      '      prompt: "{{ product }} in {{ setting }}"',
      '      aspectRatio: "{{ format }}"',
    ],
  });
}

async function child(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-'));
  try {
    const file = writeJob(dir);
    const models = emulatorCatalog();
    const baselineRss = process.resourceUsage().maxRSS;
    const start = performance.now();
    const { items } = await validateJob(file, { models });
    const ms = performance.now() - start;
    const peakRss = process.resourceUsage().maxRSS; // KiB
    process.stdout.write(`${JSON.stringify({ items: items.length, ms, baselineRss, peakRss })}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const jobExpand: Benchmark = async () => {
  const self = fileURLToPath(import.meta.url);
  const result = spawnSync(process.execPath, ['--import', 'tsx', self], {
    env: { ...process.env, [CHILD_FLAG]: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`job-expand child failed: ${result.stderr}`);
  const { items, ms, baselineRss, peakRss } = JSON.parse(
    result.stdout.trim().split('\n').pop() ?? '{}',
  ) as {
    items: number;
    ms: number;
    baselineRss: number;
    peakRss: number;
  };
  const peakMb = peakRss / 1024;
  return [
    {
      group: 'job',
      metric: `expand + validate ${items} items (matrix x ${ROWS}-row CSV)`,
      value: ms,
      unit: 'ms',
      target: '< 1000',
      pass: ms < 1000,
    },
    {
      group: 'job',
      metric: 'peak RSS of the expanding process',
      value: peakMb,
      unit: 'MB',
      target: '< 200',
      pass: peakMb < 200,
      note: `${((peakRss - baselineRss) / 1024).toFixed(1)} MB above the process before expanding`,
    },
  ];
};

if (process.env[CHILD_FLAG] === '1') await child();
