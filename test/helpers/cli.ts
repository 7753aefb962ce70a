/**
 * The CLI under test, two ways: `runCliCaptured` runs `ibatch ARGS` in this
 * process (no build needed, output captured); `spawnCli` runs
 * `node bin/ibatch.js ARGS` as a real process (signals, SIGKILL, a second
 * process; needs `npm run build`), killed when its test is done.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname } from 'node:path';
import { Writable } from 'node:stream';
import { expect } from 'vitest';
import type { CliIo } from '../../src/cli/command.js';
import { runCli } from '../../src/cli/main.js';
import { defer } from './cleanup.js';
import { BIN } from './paths.js';
import { until } from './until.js';

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A writable that keeps what it was given; `isTTY` may be set to test TTY output. */
export function capture(): Writable & { text(): string; isTTY?: boolean } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  return Object.assign(stream, { text: () => chunks.join('') });
}

export async function runCliCaptured(
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<CliResult> {
  const stdout = capture();
  const stderr = capture();
  const io: CliIo = { stdout, stderr, env, cwd, exitCode: 0 };
  const code = await runCli(args, io);
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * `ibatch plan JOB --json ARGS` in this process (cwd: the job's folder): the
 * result, and the document it printed (`T`: the fields the test reads).
 */
export async function planCli<T>(
  jobPath: string,
  env: NodeJS.ProcessEnv,
  ...args: string[]
): Promise<CliResult & { readonly doc: T | undefined }> {
  const result = await runCliCaptured(['plan', jobPath, '--json', ...args], env, dirname(jobPath));
  return { ...result, doc: result.stdout ? (JSON.parse(result.stdout) as T) : undefined };
}

/** The first Node process warning line in `stderr` (`(node:PID) SomeWarning: ...`), if any. */
export function processWarningIn(stderr: string): string | undefined {
  return /^\(node:\d+\) (?:\[\w+\] )?\w*Warning: .*$/m.exec(stderr)?.[0];
}

/** No stack frames and no "unexpected error": the user sees one sentence. */
export function expectNoStack(stderr: string): void {
  expect(stderr).not.toMatch(/^\s+at /m);
  expect(stderr).not.toContain('unexpected error');
}

/** One line of a JSON log (`IBATCH_LOG_FORMAT=json`), the fields the tests read. */
export interface JsonLogLine {
  readonly level: number;
  readonly time: number;
  readonly msg: string;
  readonly event?: string;
  readonly endpoint?: string;
  /** pino's name for the logging process's pid (ibatch's loggers leave it out). */
  readonly pid?: number;
  /** A lock's holder, in the lines about waiting for one or taking one over. */
  readonly holder?: {
    readonly pid?: number;
    readonly hostname?: string;
    readonly journal?: string;
  };
}

/** The JSON log lines of a CLI's stderr (other lines, such as the final message, skipped). */
export function jsonLogs(stderr: string): JsonLogLine[] {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as JsonLogLine);
}

/** The run's stdout and stderr together, for asserting on the words a user reads. */
export function said(result: Pick<CliResult, 'stdout' | 'stderr'>): string {
  return `${result.stdout}\n${result.stderr}`;
}

export interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface SpawnedCli {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** stdout and stderr interleaved as they arrived. */
  output(): string;
  /** Resolves once the process has exited and its output is closed. */
  readonly exited: Promise<Exit>;
}

export interface SpawnCliOptions {
  readonly cwd: string;
  /** The child's whole environment besides PATH (nothing else leaks in from ours). */
  readonly env?: NodeJS.ProcessEnv;
  /** Run as this user (a root test runner dropping root so file permissions apply). */
  readonly user?: { readonly uid: number; readonly gid: number };
}

/** `node bin/ibatch.js ARGS` as a real process; SIGKILLed after the test if still running. */
export function spawnCli(args: readonly string[], options: SpawnCliOptions): SpawnedCli {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? '', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user ?? {}),
  });
  let stdout = '';
  let stderr = '';
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
    output += chunk.toString('utf8');
  });
  const exited = new Promise<Exit>((resolve) => {
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  defer(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    // Every spawned CLI of every test: what Node or a dependency warns
    // (a deprecation, a listener leak) reaches the user's terminal as is.
    const warning = processWarningIn(stderr);
    if (warning !== undefined) {
      throw new Error(`ibatch ${args[0] ?? ''} printed a Node process warning: ${warning}`);
    }
  });
  return { child, stdout: () => stdout, stderr: () => stderr, output: () => output, exited };
}

/** The first line the process prints on stdout (e.g. `ibatch emulator --json`'s URLs); fails if it exits first. */
export function firstStdoutLine(run: SpawnedCli, timeoutMs = 20_000): Promise<string> {
  return until(
    () => {
      const { exitCode, signalCode } = run.child;
      if (exitCode !== null || signalCode !== null) {
        throw new Error(`exited (${exitCode ?? signalCode}) before a line: ${run.stderr()}`);
      }
      const text = run.stdout();
      return text.includes('\n') ? text.slice(0, text.indexOf('\n')) : undefined;
    },
    { timeoutMs, what: 'a first line on stdout' },
  );
}

/**
 * Runs `body` while `run` is stopped (SIGSTOP), then lets it go on
 * (SIGCONT). A stopped run keeps its locks and connections, so a second
 * runner meets it holding the job however slowly a busy machine starts that
 * runner, and it cannot finish meanwhile.
 */
export async function whileStopped<T>(run: SpawnedCli, body: () => Promise<T>): Promise<T> {
  run.child.kill('SIGSTOP');
  try {
    return await body();
  } finally {
    run.child.kill('SIGCONT');
  }
}
