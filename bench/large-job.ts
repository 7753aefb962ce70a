/**
 * `validate` and `plan` of a 100,000-row CSV job whose rows differ only in
 * text, through the real CLI (`node bin/ibatch.js ... --emulator --json`, so
 * `npm run build` first) in a child process: its wall time, its peak RSS (read
 * by a preload hook inside the child, so the figure is the CLI's own, the
 * in-process emulator included) and, for `plan`, the preview calls it made.
 * Then the nightly case: `plan` of that job grown by 1,000 rows, with a
 * journal in which its 100,000 items succeeded (`--base-url` an emulator in
 * this process: the journal's run is on that service; the peak RSS is then
 * the CLI's alone, no emulator in it).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmulator } from '../src/emulator/index.js';
import { validateJob } from '../src/job/index.js';
import { toNewItem } from '../src/scheduler/decide/item-records.js';
import { PlanItems } from '../src/scheduler/index.js';
import { accountFingerprint } from '../src/shared/index.js';
import { emulatorCatalog } from '../test/job/helpers.js';
import { runCli } from './cli-child.js';
import { writeCsvJob } from './csv-job.js';
import { writeFinishedRun } from './large-outputs.js';
import type { Benchmark, BenchRow } from './types.js';

const ROWS = 100_000;
/** Rows added since the journal's run: what the nightly plan quotes. */
const ADDED = 1000;
const STEP_LINES = [
  '    input:',
  '      prompt: "{{ product }} in {{ setting }}, catalogue {{ sku }}"',
];

interface CliMeasure {
  readonly ms: number;
  readonly peakMb: number;
  readonly json: Record<string, unknown>;
}

/** A service for the CLI other than its in-process emulator. */
interface Service {
  readonly baseUrl: string;
  readonly apiKey: string;
}

async function measureCli(
  command: 'validate' | 'plan',
  job: string,
  cwd: string,
  service?: Service,
): Promise<CliMeasure> {
  const target = service ? ['--base-url', service.baseUrl] : ['--emulator'];
  // plan exits 3 when the total exceeds the emulator account's balance (it does).
  const result = await runCli([command, job, ...target, '--json'], {
    cwd,
    okCodes: command === 'plan' ? [0, 3] : [0],
    ...(service ? { env: { IBATCH_API_KEY: service.apiKey } } : {}),
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

/**
 * `plan` of the job grown by ADDED rows, its first ROWS items done in the
 * journal (written with the journal ops, identities as `plan` computes them).
 */
async function nightlyPlan(): Promise<CliMeasure> {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-nightly-'));
  const emulator = await startEmulator({ port: 0, accounts: [{ credits: 1e9 }] });
  try {
    const account = emulator.accounts[0];
    if (!account) throw new Error('the emulator has no account');
    const name = 'nightly-job';
    const done = writeCsvJob(dir, { name, rows: ROWS, stepLines: STEP_LINES });
    const { job, catalog, items } = await validateJob(done, { models: emulatorCatalog() });
    const lean = PlanItems.of(job, catalog, items).items;
    const service = emulator.baseUrl;
    await writeFinishedRun(join(dir, '.ibatch', 'journal.db'), {
      jobName: name,
      runId: 'nightly-1',
      jobPath: done,
      options: { service, scope: `${service}#${accountFingerprint(account.apiKey)}` },
      items: items.map((item, i) => toNewItem(item, lean[i]?.identity ?? '')),
    });
    const grown = writeCsvJob(dir, { name, rows: ROWS + ADDED, stepLines: STEP_LINES });
    const plan = await measureCli('plan', grown, dir, { baseUrl: service, apiKey: account.apiKey });
    const [step] = plan.json.steps as { new: number; done: number }[];
    if (step?.new !== ADDED || step.done !== ROWS)
      throw new Error(
        `nightly plan: ${JSON.stringify(step)} (expected ${ADDED} new, ${ROWS} done)`,
      );
    return plan;
  } finally {
    await emulator.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export const largeJob: Benchmark = async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-large-'));
  try {
    const job = writeCsvJob(dir, { name: 'large-job', rows: ROWS, stepLines: STEP_LINES });
    const validate = await measureCli('validate', job, dir);
    if (validate.json.items !== ROWS)
      throw new Error(`validate counted ${String(validate.json.items)} items`);
    const plan = await measureCli('plan', job, dir);
    const nightly = await nightlyPlan();
    const quotes = Number(plan.json.quotes);
    const label = `${ROWS.toLocaleString('en')}-row CSV job`;
    const cli = (command: string) =>
      `node bin/ibatch.js ${command} --emulator --json, process start to exit`;
    const rss = 'the CLI process, in-process emulator included';
    return [
      below(`plan ${label}: preview calls`, quotes, 'calls', 10, 'one price class', true),
      below(`plan ${label}: wall time`, plan.ms, 'ms', 10_000, cli('plan')),
      below(`plan ${label}: peak RSS`, plan.peakMb, 'MB', 200, rss),
      below(
        `plan ${label} + ${ADDED.toLocaleString('en')} rows, the rest done: wall time`,
        nightly.ms,
        'ms',
        10_000,
        'node bin/ibatch.js plan --base-url --json, a journal of 100,000 succeeded items',
      ),
      below(
        `plan ${label} + ${ADDED.toLocaleString('en')} rows, the rest done: peak RSS`,
        nightly.peakMb,
        'MB',
        200,
        'the CLI process alone (the emulator serves from the bench process)',
      ),
      below(`validate ${label}: time`, validate.ms, 'ms', 5000, cli('validate')),
      below(`validate ${label}: peak RSS`, validate.peakMb, 'MB', 200, rss),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};
