/**
 * `scaleRun`: a large run (100,000 items by default) through the real CLI
 * (`node bin/ibatch.js run --base-url`, so `npm run build` first) beside a
 * 1,000-item run of the same job shape, each against its own emulator in
 * this process at a high time scale, our limits scaled alike. The CLI child
 * is sampled from /proc over its whole life (proc-sampler.ts); its exit hook
 * (cli-child.ts) gives the exact CPU time. Once the large run has 75% of its
 * items done it is stopped for a moment while its folder and journal are
 * copied (what a SIGKILL at that moment leaves); after the large run ends,
 * that copy is resumed against the same emulator: the kill/resume without a
 * second run up to 75% (scale-side.ts). Sizes, time scale and the PostgreSQL
 * side come from the environment (scale-presets.ts).
 */
import { availableParallelism, loadavg } from 'node:os';
import { runCli } from './cli-child.js';
import { withBenchPostgres } from './postgres.js';
import type { ProcSummary } from './proc-sampler.js';
import { postgresJournal, sqliteJournal } from './scale-journal.js';
import { type ScalePreset, scalePreset } from './scale-presets.js';
import {
  copyAtKillPoint,
  dispose,
  disposeCopy,
  type MakeJournal,
  moveCopyInPlace,
  prepare,
  prepareCopy,
  RESUME_WAIT_MS,
  ROOT,
  resumeCopy,
  SAMPLE_MS,
  type SampledRun,
  sampledRun,
} from './scale-side.js';
import type { Benchmark, BenchRow } from './types.js';

const KILL_AT_FRACTION = 0.75;

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

/**
 * The times of three runs of one command on `side`'s journal, shortest
 * first (the middle one is the row): one run of a command of a few seconds
 * is at the mercy of whatever else the machine does at that moment.
 */
async function threeTimes(side: { readonly dir: string }, args: string[]): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < 3; i++) ms.push((await runCli(args, { cwd: side.dir })).ms);
  return ms.sort((a, b) => a - b);
}

const fmtMs = (ms: readonly number[]) => ms.map((v) => v.toFixed(0)).join(', ');

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
  const copySide = await prepareCopy(large, makeJournal);
  try {
    const smallRun = await sampledRun(small, sizes.small);
    const killAt = Math.round(sizes.large * KILL_AT_FRACTION);
    let copying: ReturnType<typeof copyAtKillPoint> | undefined;
    const largeRun = await sampledRun(large, sizes.large, {
      onProgress: (done, pid) => {
        if (done >= killAt && copying === undefined) {
          copying = copyAtKillPoint(pid, large, copySide);
          copying.catch(() => {}); // awaited after the run, which reports the failure
        }
      },
    });
    if (!copying) throw new Error(`the run's journal never showed ${killAt} items done`);
    const copied = await copying;
    const statusMs = await threeTimes(large, ['status', large.job, ...large.journalArgs, '--json']);
    const reportMs = await threeTimes(large, ['report', large.job, ...large.journalArgs]);
    const bytes = await large.journal.bytes();
    const resume = await resumeCopy(
      large,
      moveCopyInPlace(large, copySide),
      sizes.large,
      preset.resumeCapMs,
    );
    const wallMs = performance.now() - wallStart;
    const resumedLife = resume.resumed.capped
      ? `killed at the cap after ${(preset.resumeCapMs / 1000).toFixed(0)} s (IBATCH_BENCH_SCALE_RESUME_CAP_S) with ${resume.resumed.doneAtEnd} of ${sizes.large} items done: the peak covers that part`
      : `ran to its end (${(resume.resumed.run.ms / 1000).toFixed(1)} s, exit 0)`;
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
        `status JOB --json, spawn to exit, median of 3 (${fmtMs(statusMs)} ms)`,
      ),
      row(
        kind,
        `report on the ${L}-item journal`,
        reportMs[1] ?? Number.NaN,
        'ms',
        { op: '<', max: 10_000 },
        `report JOB, spawn to exit, median of 3 (${fmtMs(reportMs)} ms)`,
      ),
      row(
        kind,
        'resume after SIGKILL: spawn to first create',
        resume.firstCreateMs,
        'ms',
        { op: '<', max: 5000 },
        `the large run stopped at ${copied.doneAtCopy} items done and its folder and journal copied, the copy resumed in its place after the run, on its emulator; first create request it receives (Infinity: none within ${RESUME_WAIT_MS / 1000} s)`,
      ),
      row(
        kind,
        'resume after SIGKILL: peak RSS of the resumed run',
        resume.resumed.summary.peakMb,
        'MB',
        { op: '<', max: 300 },
        `${resumedLife}; ${resume.creates} create requests; VmHWM sampled; highest VmRSS at ${(resume.resumed.summary.peakAtMs / 1000).toFixed(1)} s`,
      ),
      row(
        kind,
        'resume after SIGKILL: items done per second by the resumed run',
        (resume.resumed.doneAtEnd - copied.doneAtCopy) / (resume.resumed.run.ms / 1000),
        'items/s',
        undefined,
        `${resume.resumed.doneAtEnd - copied.doneAtCopy} items from ${copied.doneAtCopy} to ${resume.resumed.doneAtEnd}; CPU ${(resume.resumed.cpuMs / 1000).toFixed(0)} s; the large run: ${(sizes.large / (largeRun.run.ms / 1000)).toFixed(0)} items/s`,
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
    await Promise.all([dispose(small), dispose(large), disposeCopy(large, copySide)]);
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
  const rows = preset.sqlite
    ? await measureSide(preset, preset, async (dir) => sqliteJournal(dir))
    : [];
  const { postgresLarge } = preset;
  if (postgresLarge) {
    const pgRows = await withBenchPostgres('scaleRun', ({ server }) =>
      measureSide(preset, { small: preset.postgresSmall, large: postgresLarge }, () =>
        postgresJournal(server),
      ),
    );
    rows.push(...(pgRows ?? []));
  }
  return rows;
};
