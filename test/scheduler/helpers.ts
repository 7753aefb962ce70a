/**
 * Shared helpers of the run-semantics, budget and status tests: a job file in
 * a temp dir, a real emulator over HTTP, `ibatch` in-process (runCli) or as a
 * real process (node bin/ibatch.js, needs `npm run build`), the ledger's
 * charges, and deadline polling instead of sleeps.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import {
  type EmulatorOptions,
  type LedgerEntry,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';
import { type CliResult, runCliCaptured } from '../helpers/cli.js';

export type { CliResult } from '../helpers/cli.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const BIN = path.join(REPO, 'bin', 'ibatch.js');

/** Our limits matching an emulator at `scale` (the service's limits divided by it). */
export function limitsFor(scale: number): string {
  const w = (seconds: number) => `${Math.round((seconds * 1000) / scale)}ms`;
  return `requests=120/${w(60)},generations=20/${w(60)},trainings=5/${w(3600)},uploads=30/${w(60)}`;
}

export interface Workspace {
  readonly dir: string;
  readonly jobPath: string;
  readonly journalPath: string;
  /** Rewrites the job file. */
  write(yaml: string): void;
  cleanup(): void;
}

export function workspace(yaml: string): Workspace {
  const dir = mkdtempSync(path.join(tmpdir(), 'ibatch-sched-'));
  const jobPath = path.join(dir, 'job.yaml');
  const write = (text: string) => writeFileSync(jobPath, text);
  write(yaml);
  return {
    dir,
    jobPath,
    journalPath: path.join(dir, '.ibatch', 'journal.db'),
    write,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** A job of `n` cheap, fast images (sdxl-lite, one output each): 2 credits per item. */
export function imageJob(options: {
  name: string;
  n: number;
  budget?: number;
  /** Prompt before the scene name. */
  prompt?: string;
}): string {
  const scenes = Array.from({ length: options.n }, (_, i) => `s${i + 1}`);
  const lines = [
    'version: 1',
    `name: ${options.name}`,
    ...(options.budget === undefined ? [] : [`budget: ${options.budget}`]),
    'output: out',
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    '    matrix:',
    `      scene: [${scenes.join(', ')}]`,
    '    input:',
    `      prompt: "${options.prompt ?? 'a quiet street, scene'} {{ scene }}"`,
  ];
  return `${lines.join('\n')}\n`;
}

export async function emulatorFor(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return startEmulator({ seed: 7, ...options });
}

/** Env for a CLI talking to `em` as its first account. */
export function envFor(em: RunningEmulator, scale: number): NodeJS.ProcessEnv {
  return {
    IBATCH_BASE_URL: em.baseUrl,
    IBATCH_API_KEY: em.accounts[0]!.apiKey,
    IBATCH_LIMITS: limitsFor(scale),
    IBATCH_LOG_FORMAT: 'json',
  };
}

/** `ibatch ARGS` in this process (no build needed). */
export async function cli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<CliResult> {
  return runCliCaptured(args, env, cwd);
}

export interface Spawned {
  readonly child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Resolves when the process exits: its code, or the signal that ended it. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const spawned = new Set<ChildProcess>();

/** `node bin/ibatch.js ARGS` as a real process (SIGINT, SIGKILL, a second process). */
export function spawnCli(args: string[], env: NodeJS.ProcessEnv, cwd: string): Spawned {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.add(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString('utf8')));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      spawned.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Kills (SIGKILL) every process spawnCli started that is still alive. */
export function killSpawned(): void {
  for (const child of spawned) {
    if (child.exitCode === null && child.pid !== undefined) child.kill('SIGKILL');
  }
  spawned.clear();
}

/** Polls `check` until it returns a truthy value or the deadline passes. */
export async function waitFor<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

export async function charges(em: RunningEmulator): Promise<LedgerEntry[]> {
  const id = em.accounts[0]!.id;
  return (await em.admin.ledger(id)).filter((e) => e.type === 'charge');
}

/** Net spend of the account from the ledger (charges - refunds). */
export async function ledgerNet(em: RunningEmulator): Promise<number> {
  const id = em.accounts[0]!.id;
  return (await em.admin.ledger(id)).reduce(
    (sum, e) => sum + (e.type === 'charge' ? e.amount : -e.amount),
    0,
  );
}

/**
 * The ledger shows exactly one charge per logical item: one charge per
 * distinct idempotency key, and the keys name distinct items.
 */
export function chargesPerItem(entries: readonly LedgerEntry[]): Map<string, number> {
  const perItem = new Map<string, number>();
  for (const e of entries) {
    // Keys are ib1-<job>-<run>-<step>-<item>-a<n>-<hash>: drop the attempt and hash.
    const item = (e.idempotencyKey ?? '').replace(/-a\d+-[0-9a-f]{32}$/, '');
    perItem.set(item, (perItem.get(item) ?? 0) + 1);
  }
  return perItem;
}

/** Every item charged exactly once: `n` charges over `n` distinct items. */
export function expectOneChargePerItem(entries: readonly LedgerEntry[], n: number): void {
  expect(entries).toHaveLength(n);
  const perItem = chargesPerItem(entries);
  expect(perItem.size).toBe(n);
  expect([...perItem.values()].every((count) => count === 1)).toBe(true);
}

/** Slow enough (10 creates per 2 s) that a 20-item run is still going when a test acts on it. */
export function slowEnv(em: RunningEmulator, scale: number): NodeJS.ProcessEnv {
  return {
    ...envFor(em, scale),
    IBATCH_LIMITS:
      'requests=120/2000ms,generations=10/2000ms,trainings=5/120000ms,uploads=30/2000ms',
  };
}
