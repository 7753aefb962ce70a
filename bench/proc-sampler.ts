/**
 * Samples a child process from outside, over its whole life: resident memory
 * (`VmRSS`) and the kernel's high-water mark (`VmHWM`) from /proc/PID/status,
 * its CPU time from /proc/PID/stat, the machine's load, and a progress figure
 * the caller supplies (items done). `VmHWM` is the true peak even between
 * samples, and the samples say when it was reached; unlike the exit hook of
 * cli-child.ts this works for a process that is killed. Linux only: where
 * /proc is missing the samples stay empty and the figures are NaN.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { sleep } from '../src/shared/index.js';

export interface ProcSample {
  /** ms since the sampler started (about the spawn). */
  readonly atMs: number;
  readonly rssMb: number;
  /** Peak RSS so far (kernel's high-water mark), MB. */
  readonly hwmMb: number;
  /** user + system CPU so far, ms. */
  readonly cpuMs: number;
  /** The caller's progress figure at that moment (items done). */
  readonly done: number;
  /** The machine's 1-minute load average. */
  readonly load: number;
}

export interface ProcSampler {
  /** Waits for the sampling loop to end (it ends when the process is gone) and returns every sample. */
  finish(): Promise<readonly ProcSample[]>;
}

/** Clock ticks per second of /proc/PID/stat's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

async function readSample(pid: number): Promise<Omit<ProcSample, 'atMs' | 'done' | 'load'>> {
  const [status, stat] = await Promise.all([
    readFile(`/proc/${pid}/status`, 'utf8'),
    readFile(`/proc/${pid}/stat`, 'utf8'),
  ]);
  const kb = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  if (status.includes('State:\tZ')) throw new Error('the process has exited');
  const rssKb = kb('VmRSS');
  const hwmKb = kb('VmHWM');
  // A process in the middle of exiting has released its memory: its status
  // has no VmRSS or VmHWM any more, which read as NaN would turn the peak
  // of the whole life into NaN. It is gone: the samples before stand.
  if (Number.isNaN(rssKb) || Number.isNaN(hwmKb)) throw new Error('the process is exiting');
  return {
    rssMb: rssKb / 1024,
    hwmMb: hwmKb / 1024,
    cpuMs: (ticks * 1000) / TICKS_PER_SECOND,
  };
}

/** Samples `pid` every `intervalMs` until /proc no longer has it (or it is a zombie). */
export function sampleProcess(
  pid: number,
  options: { readonly intervalMs: number; readonly progress: () => Promise<number> | number },
): ProcSampler {
  const started = performance.now();
  const samples: ProcSample[] = [];
  const loop = (async () => {
    for (;;) {
      let sample: Omit<ProcSample, 'atMs' | 'done' | 'load'>;
      try {
        sample = await readSample(pid);
      } catch {
        return; // gone: the last sample stands
      }
      samples.push({
        ...sample,
        atMs: performance.now() - started,
        done: await options.progress(),
        load: loadavg()[0] ?? Number.NaN,
      });
      await sleep(options.intervalMs);
    }
  })();
  return {
    async finish() {
      await loop;
      return samples;
    },
  };
}

export interface ProcSummary {
  readonly peakMb: number;
  /** The sample with the highest VmRSS: when the peak was reached and how far the run was. */
  readonly peakAtMs: number;
  readonly peakAtDone: number;
  readonly lastRssMb: number;
  readonly samples: number;
  readonly meanLoad: number;
  readonly maxLoad: number;
}

export function summarize(samples: readonly ProcSample[]): ProcSummary {
  let top: ProcSample | undefined;
  for (const s of samples) if (!top || s.rssMb > top.rssMb) top = s;
  const loads = samples.map((s) => s.load);
  return {
    peakMb: samples.length === 0 ? Number.NaN : Math.max(...samples.map((s) => s.hwmMb)),
    peakAtMs: top?.atMs ?? Number.NaN,
    peakAtDone: top?.done ?? Number.NaN,
    lastRssMb: samples.at(-1)?.rssMb ?? Number.NaN,
    samples: samples.length,
    meanLoad: loads.reduce((a, b) => a + b, 0) / Math.max(1, loads.length),
    maxLoad: loads.length === 0 ? Number.NaN : Math.max(...loads),
  };
}

/**
 * Marginal CPU per item done in each tenth of the run (by items done): the
 * CPU the process spent while the tenth's items finished, over their count.
 * A flat series means the cost of an item does not grow with the items done.
 */
export function marginalCpuByTenth(samples: readonly ProcSample[], total: number): number[] {
  const out: number[] = [];
  for (let tenth = 1; tenth <= 10; tenth++) {
    const from = samples.find((s) => s.done >= ((tenth - 1) * total) / 10);
    const to = samples.find((s) => s.done >= (tenth * total) / 10) ?? samples.at(-1);
    if (!from || !to || to.done <= from.done) out.push(Number.NaN);
    else out.push((to.cpuMs - from.cpuMs) / (to.done - from.done));
  }
  return out;
}
