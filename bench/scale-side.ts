/**
 * One side of `scaleRun` (scale-run.ts): a job folder with its emulator and
 * journal, its `run` sampled from /proc over its whole life, the copy of its
 * folder and journal at the kill point, and the resume of that copy.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { BUCKETS } from '../src/contract/index.js';
import { type RunningEmulator, startEmulator } from '../src/emulator/index.js';
import { sleep } from '../src/shared/index.js';
import { type CliRun, runCli, startCli } from './cli-child.js';
import { writeCsvJob } from './csv-job.js';
import { scaledLimits } from './helpers.js';
import { marginalCpuByTenth, type ProcSummary, sampleProcess, summarize } from './proc-sampler.js';
import { type BenchJournal, sqliteJournal } from './scale-journal.js';
import type { ScalePreset } from './scale-presets.js';

/** How often the CLI child is sampled from /proc, ms. */
export const SAMPLE_MS = 250;
/** Longest wait for the resumed run's first create: a row past its target, not a hung bench. */
export const RESUME_WAIT_MS = 60_000;
/**
 * On tmpfs where there is one: every journal commit and output file is
 * fsynced, and on this machine's disk the fsyncs, not the CPU, set the pace.
 * The figures measured are CPU, memory, bytes and start-up times, which the
 * disk does not change.
 */
export const ROOT = existsSync('/dev/shm') ? '/dev/shm' : tmpdir();

export interface Side {
  readonly dir: string;
  readonly job: string;
  readonly journal: BenchJournal;
  readonly emulator: RunningEmulator;
  readonly env: NodeJS.ProcessEnv;
  /** `--journal LOCATION` for a PostgreSQL journal; none for the default SQLite file. */
  readonly journalArgs: readonly string[];
  readonly runArgs: readonly string[];
}

export type MakeJournal = (dir: string) => Promise<BenchJournal>;

function limitsSpec(timeScale: number): string {
  const limits = scaledLimits(timeScale);
  return BUCKETS.map((b) => `${b}=${limits[b].count}/${limits[b].windowMs}ms`).join(',');
}

export async function prepare(items: number, preset: ScalePreset, makeJournal: MakeJournal) {
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

export async function dispose(side: Side): Promise<void> {
  await side.journal.close();
  await side.emulator.stop();
  rmSync(side.dir, { recursive: true, force: true });
}

export interface SampledRun {
  readonly run: CliRun;
  readonly summary: ProcSummary;
  readonly marginal: readonly number[];
  /** Killed at `capMs` before it ended. */
  readonly capped: boolean;
  /** Items done at the last sample. */
  readonly doneAtEnd: number;
  /** CPU ms: the exit hook's, or the last sample's when it was killed. */
  readonly cpuMs: number;
}

/**
 * Runs `run` to its end (or, given `capMs`, kills it then), sampled;
 * `onProgress` sees each items-done figure.
 */
export async function sampledRun(
  side: Side,
  items: number,
  options: {
    readonly cwd?: string;
    readonly onProgress?: (done: number, pid: number) => void;
    readonly capMs?: number;
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
  let capped = false;
  const cap =
    options.capMs === undefined
      ? undefined
      : setTimeout(() => {
          capped = true;
          child.child.kill('SIGKILL');
        }, options.capMs);
  const run = await child.done;
  clearTimeout(cap);
  const samples = await sampler.finish();
  if (run.code !== 0 && !capped)
    throw new Error(`ibatch run exited ${run.code ?? run.signal}: ${run.stderr}`);
  const summary = summarize(samples);
  // The exit hook's maxRSS is the same high-water mark, read at the very end.
  const peakMb = Math.max(summary.peakMb, Number.isNaN(run.peakMb) ? 0 : run.peakMb);
  return {
    run,
    summary: { ...summary, peakMb },
    marginal: marginalCpuByTenth(samples, items),
    capped,
    doneAtEnd: samples.at(-1)?.done ?? Number.NaN,
    cpuMs: Number.isNaN(run.cpuMs) ? (samples.at(-1)?.cpuMs ?? Number.NaN) : run.cpuMs,
  };
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
export async function copyAtKillPoint(pid: number, side: Side, copy: Side) {
  const started = performance.now();
  process.kill(pid, 'SIGSTOP');
  try {
    await exec('cp', ['-a', `${side.dir}/.`, copy.dir]);
    if (copy.journal.kind !== 'sqlite') {
      await runCli(['journal', 'copy', side.journal.location, copy.journal.location], {
        cwd: side.dir,
      });
    }
  } finally {
    process.kill(pid, 'SIGCONT');
  }
  return { ms: performance.now() - started, doneAtCopy: await copy.journal.done() };
}

async function createRequests(emulator: RunningEmulator): Promise<number> {
  const account = emulator.accounts[0];
  const stats = await emulator.admin.stats();
  return stats.accounts.find((a) => a.id === account?.id)?.requestsByEndpoint.createGeneration ?? 0;
}

/**
 * Resumes the copy against the large run's emulator (its generations are
 * there, as after a real kill) and runs it to its end or for `capMs`, sampled. Spawn to
 * first create is the first create request the emulator receives: the
 * resumed run re-sends the copy's run id and item keys, so the service may
 * answer with a generation it already has, and a charge is not a reliable
 * sign of the first create.
 */
export async function resumeCopy(side: Side, copySide: Side, items: number, capMs: number) {
  const before = await createRequests(side.emulator);
  const spawnedAt = performance.now();
  let firstCreateMs = Number.POSITIVE_INFINITY;
  let resumed: SampledRun | undefined;
  const running = sampledRun(copySide, items, { capMs }).then((r) => {
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

/**
 * An empty folder and journal to copy `side` into at its kill point. The
 * copy is resumed from `side`'s own folder (moveCopyInPlace): a run records
 * the absolute folder it writes to, and resumed from elsewhere it would go on
 * writing into the original one, over the first run's files.
 */
export async function prepareCopy(side: Side, makeJournal: MakeJournal): Promise<Side> {
  const dir = mkdtempSync(join(ROOT, `${basename(side.dir)}-copy-`));
  const journal = await makeJournal(dir);
  return { ...side, dir, journal };
}

/**
 * Once `side`'s run and its readers are done: moves its folder aside and the
 * copy into its place, and returns the side that resumes the copy there.
 */
export function moveCopyInPlace(side: Side, copy: Side): Side {
  renameSync(side.dir, `${side.dir}-finished`);
  renameSync(copy.dir, side.dir);
  const journal = copy.journal.kind === 'sqlite' ? sqliteJournal(side.dir) : copy.journal;
  const journalArgs = journal.kind === 'sqlite' ? [] : ['--journal', journal.location];
  return {
    ...side,
    journal,
    journalArgs,
    runArgs: side.runArgs.map((a) => (a === side.journal.location ? journal.location : a)),
  };
}

/** Removes what the copy left: the first run's folder moved aside, the copy's journal. */
export async function disposeCopy(side: Side, copy: Side): Promise<void> {
  await copy.journal.close();
  rmSync(copy.dir, { recursive: true, force: true });
  rmSync(`${side.dir}-finished`, { recursive: true, force: true });
}
