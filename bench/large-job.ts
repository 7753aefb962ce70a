/**
 * `validate` and `plan` of a 100,000-row CSV job whose rows differ only in
 * text, through the real CLI (`node bin/ibatch.js ... --emulator --json`, so
 * `npm run build` first) in a child process: its wall time, its peak RSS (read
 * by a preload hook inside the child, so the figure is the CLI's own, the
 * in-process emulator included) and, for `plan`, the preview calls it made.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from './cli-child.js';
import { writeCsvJob } from './csv-job.js';
import type { Benchmark, BenchRow } from './types.js';

const ROWS = 100_000;

interface CliMeasure {
  readonly ms: number;
  readonly peakMb: number;
  readonly json: Record<string, unknown>;
}

async function measureCli(
  command: 'validate' | 'plan',
  job: string,
  cwd: string,
): Promise<CliMeasure> {
  // plan exits 3 when the total exceeds the emulator account's balance (it does).
  const result = await runCli([command, job, '--emulator', '--json'], {
    cwd,
    okCodes: command === 'plan' ? [0, 3] : [0],
  });
  if (Number.isNaN(result.peakMb))
    throw new Error(`${command}: no peak RSS reported\n${result.stderr}`);
  return { ms: result.ms, peakMb: result.peakMb, json: JSON.parse(result.stdout) };
}

/** A row whose target is an upper bound (`< max`, or `<= max` when inclusive). */
function below(
  metric: string,
  value: number,
  unit: string,
  max: number,
  note: string,
  inclusive = false,
): BenchRow {
  return {
    group: 'job',
    metric,
    value,
    unit,
    target: `${inclusive ? '<=' : '<'} ${max}`,
    pass: inclusive ? value <= max : value < max,
    note,
  };
}

export const largeJob: Benchmark = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-large-'));
  try {
    const job = writeCsvJob(dir, {
      name: 'large-job',
      rows: ROWS,
      stepLines: [
        '    input:',
        '      prompt: "{{ product }} in {{ setting }}, catalogue {{ sku }}"',
      ],
    });
    const validate = await measureCli('validate', job, dir);
    if (validate.json.items !== ROWS)
      throw new Error(`validate counted ${String(validate.json.items)} items`);
    const plan = await measureCli('plan', job, dir);
    const quotes = Number(plan.json.quotes);
    const label = `${ROWS.toLocaleString('en')}-row CSV job`;
    const cli = (command: string) =>
      `node bin/ibatch.js ${command} --emulator --json, process start to exit`;
    const rss = 'the CLI process, in-process emulator included';
    return [
      below(`plan ${label}: preview calls`, quotes, 'calls', 10, 'one price class', true),
      below(`plan ${label}: wall time`, plan.ms, 'ms', 10_000, cli('plan')),
      below(`plan ${label}: peak RSS`, plan.peakMb, 'MB', 200, rss),
      below(`validate ${label}: time`, validate.ms, 'ms', 5000, cli('validate')),
      below(`validate ${label}: peak RSS`, validate.peakMb, 'MB', 200, rss),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
