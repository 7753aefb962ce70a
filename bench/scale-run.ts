/**
 * `scaleRun`: a large run (100,000 items by default) through the real CLI
 * (`node bin/ibatch.js run --base-url`, so `npm run build` first) beside a
 * 1,000-item run of the same job shape, each against its own emulator in
 * this process at a high time scale, our limits scaled alike. The CLI child
 * is sampled from /proc over its whole life (proc-sampler.ts); its exit hook
 * (cli-child.ts) gives the exact CPU time. Once the large run has 75% of its
 * items done, its journal is copied (`ibatch journal copy`: one consistent
 * snapshot, what a SIGKILL at that moment leaves) with its folder; after the
 * large run ends, that copy is resumed against the same emulator: the
 * kill/resume without a second run up to 75%. Sizes, time scale and the
 * PostgreSQL side come from the environment (scale-presets.ts).
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BUCKETS } from '../src/contract/index.js';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';
import { sleep } from '../src/shared/index.js';
import { type CliRun, runCli, startCli } from './cli-child.js';
import { writeCsvJob } from './csv-job.js';
import { scaledLimits } from './helpers.js';
import { marginalCpuByTenth, type ProcSummary, sampleProcess, summarize } from './proc-sampler.js';
import { type BenchJournal, postgresJournal, sqliteJournal } from './scale-journal.js';
import { type ScalePreset, scalePreset, withScalePostgres } from './scale-presets.js';
import type { Benchmark, BenchRow } from './types.js';

const KILL_AT_FRACTION = 0.75;
/** How often the CLI child is sampled from /proc, ms. */
const SAMPLE_MS = 250;
/** Longest wait for the resumed run's first create: a row past its target, not a hung bench. */
const RESUME_WAIT_MS = 60_000;
/**
 * On tmpfs where there is one: every journal commit and output file is
 * fsynced, and on this machine's disk the fsyncs, not the CPU, set the pace.
 * The figures measured are CPU, memory, bytes and start-up times, which the
 * disk does not change.
 */
const ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

interface Side {
  readonly dir: string;
  readonly job: string;
  readonly journal: BenchJournal;
  readonly emulator: RunningEmulator;
  readonly env: NodeJS.ProcessEnv;
  /** `--journal LOCATION` for a PostgreSQL journal; none for the default SQLite file. */
  readonly journalArgs: readonly string[];
  readonly runArgs: readonly string[];
}

type MakeJournal = (dir: string) => Promise<BenchJournal>;

function limitsSpec(timeScale: number): string {
  const limits = scaledLimits(timeScale);
  return BUCKETS.map((b) => `${b}=${limits[b].count}/${limits[b].windowMs}ms`).join(',');
}

async function prepare(items: number, preset: ScalePreset, makeJournal: MakeJournal) {
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
    timeScale: preset.timeScale,
    seed: 17,
    accounts: [{ credits: 1e9 }],
    latency: { 'ideogram-influencer': [8000, 40_000] },
  });
  const account = emulator.accounts[0];
  if (!account) throw new Error('the emulator has no account');
  const journal = await makeJournal(dir);
  const journalArgs = journal.kind === 'sqlite' ? [] : ['--journal', journal.location];
  return {
    dir,
    job,
    journal,
    emulator,
    env: { IBATCH_API_KEY: account.apiKey, IBATCH_LOG_FORMAT: 'json' },
    journalArgs,
    runArgs: [
      'run',
      job,
      '--base-url',
      emulator.baseUrl,
      '--limits',
      limitsSpec(preset.timeScale),
      ...journalArgs,
      '--json',
    ],
  } satisfies Side;
}

async function dispose(side: Side): Promise<void> {
  await side.journal.close();
  await side.emulator.stop();
  rmSync(side.dir, { recursive: true, force: true });
}

interface SampledRun {
  readonly run: CliRun;
  readonly summary: ProcSummary;
  readonly marginal: readonly number[];
}

/** Runs `run` to its end, sampled; `onProgress` sees each items-done figure. */
async function sampledRun(
  side: Side,
  items: number,
  options: {
    readonly cwd?: string;
    readonly onProgress?: (done: number, pid: number) => void;
  } = {},
): Promise<SampledRun> {
  const child = startCli(side.runArgs, { cwd: options.cwd ?? side.dir, env: side.env });
  const pid = child.child.pid;
  if (pid === undefined) throw new Error('the CLI did not start');
  const sampler = sampleProcess(pid, {
    intervalMs: SAMPLE_MS,
    progress: async () => {
      const done = await side.journal.done();
      options.onProgress?.(done, pid);
      return done;
    },
  });
  const run = await child.done;
  const samples = await sampler.finish();
  if (run.code !== 0) throw new Error(`ibatch run exited ${run.code ?? run.signal}: ${run.stderr}`);
  const summary = summarize(samples);
  // The exit hook's maxRSS is the same high-water mark, read at the very end.
  const peakMb = Math.max(summary.peakMb, Number.isNaN(run.peakMb) ? 0 : run.peakMb);
  return { run, summary: { ...summary, peakMb }, marginal: marginalCpuByTenth(samples, items) };
}

async function exec(command: string, args: readonly string[]): Promise<void> {
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = (await once(child, 'close')) as [number | null];
  if (code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${code}`);
}

/**
 * The state a SIGKILL at this moment would leave, in a new folder: the run is
 * stopped (SIGSTOP) while its folder is copied as it is on disk, a SQLite
 * journal with its WAL included, and a PostgreSQL journal copied into a new
 * schema (`ibatch journal copy`), then continued (SIGCONT). Its CPU and
 * memory do not change; its wall time grows by the pause, which is reported.
 */
async function copyAtKillPoint(pid: number, side: Side, copy: BenchJournal, copyDir: string) {
  const started = performance.now();
  process.kill(pid, 'SIGSTOP');
  try {
    await exec('cp', ['-a', `${side.dir}/.`, copyDir]);
    if (copy.kind !== 'sqlite') {
      await runCli(['journal', 'copy', side.journal.location, copy.location], { cwd: side.dir });
    }
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  return { ms: performance.now() - started, doneAtCopy: await copy.done() };
}

async function createRequests(emulator: RunningEmulator): Promise<number> {
  const account = emulator.accounts[0];
  const stats = await emulator.admin.stats();
  return stats.accounts.find((a) => a.id === account?.id)?.requestsByEndpoint.createGeneration ?? 0;
}

/**
 * Resumes the copy against the large run's emulator (its generations are
 * there, as after a real kill) and runs it to its end, sampled. Spawn to
 * first create is the first create request the emulator receives: the
 * resumed run re-sends the copy's run id and item keys, so the service may
 * answer with a generation it already has, and a charge is not a reliable
 * sign of the first create.
 */
async function resumeCopy(side: Side, copySide: Side, items: number) {
  const before = await createRequests(side.emulator);
  const spawnedAt = performance.now();
  let firstCreateMs = Number.POSITIVE_INFINITY;
  let resumed: SampledRun | undefined;
  const running = sampledRun(copySide, items).then((r) => {
    resumed = r;
  });
  while (resumed === undefined && performance.now() - spawnedAt < RESUME_WAIT_MS) {
    if ((await createRequests(side.emulator)) > before) {
      firstCreateMs = performance.now() - spawnedAt;
      break;
    }
    await sleep(50);
  }
  await running;
  if (!resumed) throw new Error('unreachable: the resumed run settled');
  return { firstCreateMs, resumed, creates: (await createRequests(side.emulator)) - before };
}

function row(
  journal: string,
  metric: string,
  value: number,
  unit: string,
  target: { readonly op: '<' | '<='; readonly max: number } | undefined,
  note: string,
): BenchRow {
  const suffix = journal === 'sqlite' ? '' : ` (${journal} journal)`;
  return {
    group: 'scale',
    metric: `${metric}${suffix}`,
    value,
    unit,
    ...(target === undefined
      ? {}
      : {
          target: `${target.op} ${target.max}`,
          pass: target.op === '<' ? value < target.max : value <= target.max,
        }),
    note,
  };
}

const k = (n: number) => `${n / 1000}k`;
const mb = (n: number) => n.toFixed(0);
const loadNote = (s: ProcSummary) =>
  `load avg mean ${s.meanLoad.toFixed(1)}, max ${s.maxLoad.toFixed(1)} on ${availableParallelism()} cores`;

/** Every figure of one journal kind at `small` and `large` items. */
async function measureSide(
  preset: ScalePreset,
  sizes: { readonly small: number; readonly large: number },
  makeJournal: MakeJournal,
): Promise<BenchRow[]> {
  const wallStart = performance.now();
  const loadStart = loadavg()[0] ?? Number.NaN;
  const small = await prepare(sizes.small, preset, makeJournal);
  const large = await prepare(sizes.large, preset, makeJournal);
  const copyDir = mkdtempSync(join(ROOT, `ibatch-bench-scale-copy-${sizes.large}-`));
  const copyJournal = await makeJournal(copyDir);
  const copySide: Side = {
    ...large,
    dir: copyDir,
    journal: copyJournal,
    journalArgs: copyJournal.kind === 'sqlite' ? [] : ['--journal', copyJournal.location],
    runArgs: large.runArgs.map((a) =>
      a === large.job
        ? join(copyDir, 'job.yaml')
        : a === large.journal.location
          ? copyJournal.location
          : a,
    ),
  };
  try {
    const smallRun = await sampledRun(small, sizes.small);
    const killAt = Math.round(sizes.large * KILL_AT_FRACTION);
    let copying: ReturnType<typeof copyAtKillPoint> | undefined;
    const largeRun = await sampledRun(large, sizes.large, {
      onProgress: (done, pid) => {
        if (done >= killAt && copying === undefined) {
          copying = copyAtKillPoint(pid, large, copyJournal, copyDir);
          copying.catch(() => {}); // awaited after the run, which reports the failure
        }
      },
    });
    if (!copying) throw new Error(`the run's journal never showed ${killAt} items done`);
    const copied = await copying;
    // The median of three: one start-up of a 1 s command is at the mercy of the machine.
    const statusMs: number[] = [];
    for (let i = 0; i < 3; i++) {
      const args = ['status', large.job, ...large.journalArgs, '--json'];
      statusMs.push((await runCli(args, { cwd: large.dir })).ms);
    }
    statusMs.sort((a, b) => a - b);
    const report = await runCli(['report', large.job, ...large.journalArgs], { cwd: large.dir });
    const bytes = await large.journal.bytes();
    const resume = await resumeCopy(large, copySide, sizes.large);
    const wallMs = performance.now() - wallStart;
    const perItem = (r: SampledRun, n: number) => r.run.cpuMs / n;
    const ratio = perItem(largeRun, sizes.large) / perItem(smallRun, sizes.small);
    const kind = large.journal.kind;
    const fmtTenths = (m: readonly number[]) => m.map((v) => v.toFixed(1)).join(', ');
    const S = k(sizes.small);
    const L = k(sizes.large);
    return [
      row(
        kind,
        `CPU per item, ${S}-item run`,
        perItem(smallRun, sizes.small),
        'ms',
        undefined,
        `time scale ${preset.timeScale}, limits scaled alike, files in ${ROOT}; CPU = user+system of the CLI child; wall ${(smallRun.run.ms / 1000).toFixed(1)} s; ${loadNote(smallRun.summary)}`,
      ),
      row(
        kind,
        `CPU per item, ${L}-item run`,
        perItem(largeRun, sizes.large),
        'ms',
        undefined,
        `wall ${(largeRun.run.ms / 1000).toFixed(1)} s (${(copied.ms / 1000).toFixed(1)} s of it stopped for the copy); ${loadNote(largeRun.summary)}; marginal CPU per item by tenth of items done (ms): ${fmtTenths(largeRun.marginal)}`,
      ),
      row(
        kind,
        `CPU per item ${L} / ${S}`,
        ratio,
        'ratio',
        { op: '<=', max: 1.3 },
        'side by side in this run; other processes on the machine inflate both sides, not evenly',
      ),
      row(
        kind,
        `peak RSS over the whole life, ${L}-item run`,
        largeRun.summary.peakMb,
        'MB',
        { op: '<', max: 300 },
        `VmHWM sampled every ${SAMPLE_MS} ms (${largeRun.summary.samples} samples); highest VmRSS at ${(largeRun.summary.peakAtMs / 1000).toFixed(1)} s, ${largeRun.summary.peakAtDone} items done; ${mb(largeRun.summary.lastRssMb)} MB at the last sample; ${S} run: ${mb(smallRun.summary.peakMb)} MB`,
      ),
      row(
        kind,
        `journal bytes per item, ${L}-item run`,
        bytes / sizes.large,
        'B',
        { op: '<', max: 2048 },
        `${kind === 'sqlite' ? 'journal file + WAL' : 'tables + indexes + TOAST of the schema'}, ${(bytes / 2 ** 20).toFixed(1)} MiB after the run`,
      ),
      row(
        kind,
        `status on the ${L}-item journal`,
        statusMs[1] ?? Number.NaN,
        'ms',
        { op: '<', max: 1000 },
        `status JOB --json, spawn to exit, median of 3 (${statusMs.map((ms) => ms.toFixed(0)).join(', ')} ms)`,
      ),
      row(
        kind,
        `report on the ${L}-item journal`,
        report.ms,
        'ms',
        { op: '<', max: 10_000 },
        'report JOB, spawn to exit',
      ),
      row(
        kind,
        'resume after SIGKILL: spawn to first create',
        resume.firstCreateMs,
        'ms',
        { op: '<', max: 5000 },
        `the large run stopped at ${copied.doneAtCopy} items done and its folder and journal copied, the copy resumed after the run on its emulator; first create request it receives (Infinity: none within ${RESUME_WAIT_MS / 1000} s)`,
      ),
      row(
        kind,
        'resume after SIGKILL: peak RSS of the resumed run',
        resume.resumed.summary.peakMb,
        'MB',
        { op: '<', max: 300 },
        `run to its end (${(resume.resumed.run.ms / 1000).toFixed(1)} s, ${resume.creates} create requests, exit 0), VmHWM sampled; highest VmRSS at ${(resume.resumed.summary.peakAtMs / 1000).toFixed(1)} s`,
      ),
      row(
        kind,
        `scaleRun wall time, ${S} beside ${L}`,
        wallMs / 60_000,
        'min',
        sizes.large >= 100_000 ? { op: '<', max: 25 } : undefined,
        `both runs, status, report, the copy and the resumed run; load avg ${loadStart.toFixed(1)} at start, ${(loadavg()[0] ?? Number.NaN).toFixed(1)} at end`,
      ),
    ];
  } finally {
    await copyJournal.close();
    rmSync(copyDir, { recursive: true, force: true });
    await Promise.all([dispose(small), dispose(large)]);
  }
}

export const scaleRun: Benchmark = async () => {
  const preset = scalePreset(process.env);
  process.stderr.write(
    `scaleRun: ${preset.name}: ${k(preset.small)} beside ${k(preset.large)} items, time scale ${preset.timeScale}${
      preset.postgresLarge
        ? `; PostgreSQL journal at ${k(preset.postgresSmall)} beside ${k(preset.postgresLarge)}`
        : ''
    }\n`,
  );
  const rows = await measureSide(preset, preset, async (dir) => sqliteJournal(dir));
  const { postgresLarge } = preset;
  if (postgresLarge) {
    const pgRows = await withScalePostgres((server) =>
      measureSide(preset, { small: preset.postgresSmall, large: postgresLarge }, () =>
        postgresJournal(server),
      ),
    );
    rows.push(...(pgRows ?? []));
  }
  return rows;
};
