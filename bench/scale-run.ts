/**
 * Issue 17.2: a 20,000-item run through the real CLI (`node bin/ibatch.js run
 * --base-url`, so `npm run build` first) against an emulator in this process
 * at a high time scale, our limits scaled alike, beside a 1,000-item run of
 * the same job shape on its own emulator. Figures: CPU time per item of the
 * CLI child (the emulator's work is this process's, not counted) for both
 * sizes and their ratio, the 20k run's peak RSS, the journal's bytes per
 * item, `status` and `report` on that journal, and a resume after SIGKILL at
 * item 15,000: spawn to the first charge the emulator records.
 * IBATCH_BENCH_SCALE_SMALL / _LARGE change the two sizes for a quick look
 * (the targets are for 1,000 and 20,000).
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BUCKETS } from '../src/contract/index.js';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';
import { sleep } from '../src/shared/index.js';
import { type CliRun, runCli, startCli } from './cli-child.js';
import { writeCsvJob } from './csv-job.js';
import { accountFigures, scaledLimits } from './helpers.js';
import type { Benchmark, BenchRow } from './types.js';

const SMALL = Number(process.env.IBATCH_BENCH_SCALE_SMALL ?? 1000);
const LARGE = Number(process.env.IBATCH_BENCH_SCALE_LARGE ?? 20_000);
/** 20 generations per 100 ms: 200 creates a second, so 20,000 items take about 100 s. */
const TIME_SCALE = 600;
const KILL_AT_FRACTION = 0.75;
/**
 * On tmpfs where there is one: every journal commit and output file is
 * fsynced, and on this machine's disk the fsyncs, not the CPU, set the pace
 * (about 30 items a second: 11 minutes for 20,000). The figures measured are
 * CPU, memory, bytes and start-up times, which the disk does not change.
 */
const ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

interface Side {
  readonly dir: string;
  readonly job: string;
  readonly journal: string;
  readonly emulator: RunningEmulator;
  readonly env: NodeJS.ProcessEnv;
  readonly args: readonly string[];
}

function limitsSpec(): string {
  const limits = scaledLimits(TIME_SCALE);
  return BUCKETS.map((b) => `${b}=${limits[b].count}/${limits[b].windowMs}ms`).join(',');
}

async function prepare(items: number): Promise<Side> {
  const dir = mkdtempSync(join(ROOT, `ibatch-bench-scale-${items}-`));
  const job = writeCsvJob(dir, {
    name: `scale-run-${items}`,
    rows: items,
    stepLines: [
      '    input:',
      '      prompt: "{{ product }} in {{ setting }}, catalogue {{ sku }}"',
    ],
  });
  const emulator = await startEmulator({
    port: 0,
    timeScale: TIME_SCALE,
    seed: 17,
    accounts: [{ credits: 1e9 }],
    latency: { 'ideogram-influencer': [8000, 40_000] },
  });
  const account = emulator.accounts[0];
  if (!account) throw new Error('the emulator has no account');
  return {
    dir,
    job,
    journal: join(dir, '.ibatch', 'journal.db'),
    emulator,
    env: { IBATCH_API_KEY: account.apiKey, IBATCH_LOG_FORMAT: 'json' },
    args: ['run', job, '--base-url', emulator.baseUrl, '--limits', limitsSpec(), '--json'],
  };
}

async function dispose(side: Side): Promise<void> {
  await side.emulator.stop();
  rmSync(side.dir, { recursive: true, force: true });
}

/** Journal size with its WAL (a run's checkpoint may not have folded it in yet). */
function journalBytes(journal: string): number {
  let bytes = 0;
  for (const suffix of ['', '-wal']) {
    try {
      bytes += statSync(journal + suffix).size;
    } catch {
      // no WAL file: nothing to add
    }
  }
  return bytes;
}

function succeededItems(journal: string): number {
  let db: Database.Database | undefined;
  try {
    db = new Database(journal, { readonly: true, fileMustExist: true });
    const row = db.prepare("SELECT count(*) AS n FROM items WHERE state = 'succeeded'").get() as {
      n: number;
    };
    return row.n;
  } catch {
    return 0; // not created yet, or busy: ask again
  } finally {
    db?.close();
  }
}

async function fullRun(side: Side): Promise<CliRun> {
  return runCli(side.args, { cwd: side.dir, env: side.env });
}

/** Longest wait for the resumed run's first create: a row past its target, not a hung bench. */
const RESUME_WAIT_MS = 60_000;

/**
 * Kills `run` once the journal shows `killAt` items done, starts it again and
 * times spawn to the first charge the emulator records (polled); the resumed
 * run is then killed too: what it does after its first create is the full
 * run's, measured already.
 */
async function killAndResume(side: Side, killAt: number) {
  const first = startCli(side.args, { cwd: side.dir, env: side.env });
  let exited = false;
  void first.done.then(() => {
    exited = true;
  });
  while (!exited && succeededItems(side.journal) < killAt) await sleep(50);
  if (exited) throw new Error(`run ended before ${killAt} items were done`);
  first.child.kill('SIGKILL');
  await first.done;
  const doneAtKill = succeededItems(side.journal);
  const account = side.emulator.accounts[0];
  if (!account) throw new Error('the emulator has no account');
  const spawnedAt = Date.now();
  const resumed = startCli(side.args, { cwd: side.dir, env: side.env });
  let firstCharge: number | undefined;
  while (firstCharge === undefined && Date.now() - spawnedAt < RESUME_WAIT_MS) {
    await sleep(100);
    firstCharge = (await accountFigures(side.emulator, account.id, spawnedAt)).createTimes[0];
  }
  resumed.child.kill('SIGKILL');
  await resumed.done;
  return {
    doneAtKill,
    toFirstChargeMs: firstCharge === undefined ? Number.POSITIVE_INFINITY : firstCharge - spawnedAt,
  };
}

function row(
  metric: string,
  value: number,
  unit: string,
  max: number | undefined,
  note: string,
): BenchRow {
  return {
    group: 'scale',
    metric,
    value,
    unit,
    ...(max === undefined ? {} : { target: `< ${max}`, pass: value < max }),
    note,
  };
}

export const scaleRun: Benchmark = async () => {
  const small = await prepare(SMALL);
  const large = await prepare(LARGE);
  const resume = await prepare(LARGE);
  try {
    const smallRun = await fullRun(small);
    const largeRun = await fullRun(large);
    // The median of three: one start-up of a 1 s command is at the mercy of the machine.
    const statusMs: number[] = [];
    for (let i = 0; i < 3; i++)
      statusMs.push((await runCli(['status', large.job, '--json'], { cwd: large.dir })).ms);
    const status = { ms: statusMs.sort((a, b) => a - b)[1] ?? Number.NaN };
    const report = await runCli(['report', large.job], { cwd: large.dir });
    const bytes = journalBytes(large.journal);
    const resumed = await killAndResume(resume, Math.round(LARGE * KILL_AT_FRACTION));
    const perItem = (run: CliRun, n: number) => run.cpuMs / n;
    const ratio = perItem(largeRun, LARGE) / perItem(smallRun, SMALL);
    const k = (n: number) => `${n / 1000}k`;
    const setup = `time scale ${TIME_SCALE}, limits scaled alike, files in ${ROOT}; CPU = user+system of the CLI child`;
    return [
      row(
        `CPU per item, ${k(SMALL)}-item run`,
        perItem(smallRun, SMALL),
        'ms',
        undefined,
        `${setup}; wall ${(smallRun.ms / 1000).toFixed(1)} s`,
      ),
      row(
        `CPU per item, ${k(LARGE)}-item run`,
        perItem(largeRun, LARGE),
        'ms',
        undefined,
        `wall ${(largeRun.ms / 1000).toFixed(1)} s`,
      ),
      row(
        `CPU per item ${k(LARGE)} / ${k(SMALL)}`,
        ratio,
        'ratio',
        1.3,
        'side by side in this run',
      ),
      row(
        `peak RSS, ${k(LARGE)}-item run`,
        largeRun.peakMb,
        'MB',
        300,
        `${k(SMALL)}: ${smallRun.peakMb.toFixed(0)} MB`,
      ),
      row(
        `journal bytes per item, ${k(LARGE)}-item run`,
        bytes / LARGE,
        'B',
        2048,
        `journal + WAL, ${(bytes / 2 ** 20).toFixed(1)} MiB`,
      ),
      row(
        `status on the ${k(LARGE)}-item journal`,
        status.ms,
        'ms',
        1000,
        `node bin/ibatch.js status JOB --json, spawn to exit, median of 3 (${statusMs.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
      ),
      row(
        `report on the ${k(LARGE)}-item journal`,
        report.ms,
        'ms',
        10_000,
        'node bin/ibatch.js report JOB, spawn to exit',
      ),
      row(
        `resume after SIGKILL: spawn to first create`,
        resumed.toFirstChargeMs,
        'ms',
        5000,
        `killed at ${resumed.doneAtKill} items done; first charge the emulator records (Infinity: none within ${RESUME_WAIT_MS / 1000} s)`,
      ),
    ];
  } finally {
    await Promise.all([dispose(small), dispose(large), dispose(resume)]);
  }
};
