/**
 * Runs the real CLI (`node bin/ibatch.js ...`, so `npm run build` first) in a
 * child process with a preload hook that reports, as the child exits, its own
 * peak RSS and CPU time: the figures are the CLI's, not the bench process's
 * (which may be serving the emulator meanwhile). Asynchronous, so an emulator
 * in the bench process keeps answering while the child runs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../bin/ibatch.js', import.meta.url));
const MARK = 'ibatch-bench-usage=';
/**
 * Preloaded into the CLI: prints peak RSS (KiB) and user+system CPU (µs) as it
 * exits. The main thread only: a worker thread (the PostgreSQL journal's)
 * loads it too, and a reader's worker that ended early printed the process's
 * figures of that moment first.
 */
const USAGE_HOOK = `data:text/javascript,import{isMainThread}from'node:worker_threads';if(isMainThread)process.on('exit',()=>{const u=process.resourceUsage();process.stderr.write('\\n${MARK}'+JSON.stringify({rss:u.maxRSS,cpu:u.userCPUTime+u.systemCPUTime})+'\\n')})`;

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Spawn to exit, ms. */
  readonly ms: number;
  /** Peak RSS of the child, MB; NaN when it was killed before reporting. */
  readonly peakMb: number;
  /** User + system CPU time of the child, ms; NaN when it was killed. */
  readonly cpuMs: number;
}

interface CliChild {
  readonly child: ChildProcess;
  /** performance.now() just before the spawn. */
  readonly spawnedAt: number;
  readonly done: Promise<CliRun>;
}

/** Starts `node bin/ibatch.js ...args`; `done` settles when it exits (never rejects). */
export function startCli(
  args: readonly string[],
  options: {
    readonly cwd: string;
    readonly env?: NodeJS.ProcessEnv;
    /** Node flags before the script, e.g. `--cpu-prof` to profile the CLI. */
    readonly nodeArgs?: readonly string[];
  },
): CliChild {
  const spawnedAt = performance.now();
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), '--import', USAGE_HOOK, BIN, ...args],
    {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const done = new Promise<CliRun>((resolve) => {
    child.on('close', (code, signal) => {
      const line = stderr.split('\n').find((l) => l.startsWith(MARK));
      const usage = line
        ? (JSON.parse(line.slice(MARK.length)) as { rss: number; cpu: number })
        : undefined;
      resolve({
        code,
        signal,
        stdout,
        stderr,
        ms: performance.now() - spawnedAt,
        peakMb: usage ? usage.rss / 1024 : Number.NaN,
        cpuMs: usage ? usage.cpu / 1000 : Number.NaN,
      });
    });
  });
  return { child, spawnedAt, done };
}

/** Runs the CLI to its end; throws when it exits with a code not in `okCodes`. */
export async function runCli(
  args: readonly string[],
  options: Parameters<typeof startCli>[1] & { readonly okCodes?: number[] },
): Promise<CliRun> {
  const result = await startCli(args, options).done;
  if (result.code === null || !(options.okCodes ?? [0]).includes(result.code)) {
    throw new Error(`ibatch ${args[0]} exited ${result.code ?? result.signal}: ${result.stderr}`);
  }
  return result;
}
