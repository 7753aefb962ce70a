/**
 * Shared helpers of the run-semantics, budget and status tests: a job file in
 * a temp dir, the env for a CLI at a time scale, and the ledger's charges.
 * Emulators, CLI runs and polling come from the test kit (test/helpers/).
 */

import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { LedgerEntry, RunningEmulator } from '../../src/emulator/index.js';
import { isJournalUrl, openJournal, type RunRecord } from '../../src/journal/index.js';
import { connect } from '../../src/library/connect.js';
import {
  defer,
  emulatorEnv,
  runCliCaptured,
  scaledLimits,
  spawnCli,
  tempDir,
  testEmulator,
  until,
} from '../helpers/index.js';

export interface Workspace {
  readonly dir: string;
  readonly jobPath: string;
  readonly journalPath: string;
  /** Rewrites the job file. */
  write(yaml: string): void;
}

/** A temp folder (removed after the test) holding `job.yaml`. */
export function workspace(yaml: string): Workspace {
  const dir = tempDir('sched');
  const jobPath = path.join(dir, 'job.yaml');
  const write = (text: string) => writeFileSync(jobPath, text);
  write(yaml);
  return { dir, jobPath, journalPath: path.join(dir, '.ibatch', 'journal.db'), write };
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

/** Env for a CLI talking to `em` as its first account, with limits matching its `scale`. */
export function envFor(em: RunningEmulator, scale: number): NodeJS.ProcessEnv {
  return { ...emulatorEnv(em), IBATCH_LIMITS: scaledLimits(scale) };
}

export async function charges(em: RunningEmulator): Promise<LedgerEntry[]> {
  const id = em.accounts[0]!.id;
  return (await em.admin.ledger(id)).filter((e) => e.type === 'charge');
}

/** How many requests the service saw before a Retry-After of theirs ended (`sentBeforePause`'s `from`). */
export async function earlyCount(em: RunningEmulator): Promise<number> {
  return (await em.admin.stats()).accounts[0]?.earlyRequests.length ?? 0;
}

/**
 * The requests the service saw early since it had seen `from` of them, sent
 * before `notBefore`: what a resumed run sent before the pause its journal
 * recorded. A later Retry-After the killed process was given for a request in
 * flight at its kill, and had no time to record, the resumed run cannot
 * know: it meets that one itself (a 429), and it is not counted here.
 */
export async function sentBeforePause(
  em: RunningEmulator,
  from: number,
  notBefore: number,
): Promise<unknown[]> {
  const early = (await em.admin.stats()).accounts[0]?.earlyRequests ?? [];
  return early.slice(from).filter((request) => Date.parse(request.at) < notBefore);
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

/**
 * Slow (10 creates per 2 s): a run of 20 items lasts a few seconds. Whether it
 * is still going when a test acts on it is a race a busy machine can lose; a
 * test that needs it unfinished starts it with {@link heldEnv}.
 */
export function slowEnv(em: RunningEmulator, scale: number): NodeJS.ProcessEnv {
  return {
    ...envFor(em, scale),
    IBATCH_LIMITS:
      'requests=120/2000ms,generations=10/2000ms,trainings=5/120000ms,uploads=30/2000ms',
  };
}

/** The job's newest run as `ibatch status --json` shows it (which must exit 0). */
export async function statusOf(w: Workspace): Promise<{ status: string; finished: boolean }> {
  const result = await runCliCaptured(['status', w.jobPath, '--json'], {}, w.dir);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as { run: { status: string; finished: boolean } }).run;
}

/** Every run the journal (a file or a PostgreSQL URL) holds (none when the file is not there yet), read-only. */
export async function readRuns(journalPath: string): Promise<RunRecord[]> {
  if (!isJournalUrl(journalPath) && !existsSync(journalPath)) return [];
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    return journal.listRuns();
  } finally {
    journal.close();
  }
}

/** An emulator at `scale` and a library connection to it with limits scaled alike (closed after the test). */
export async function connectedEmulator(scale: number) {
  const em = await testEmulator({ timeScale: scale });
  const env = emulatorEnv(em);
  const connection = connect({
    baseUrl: env.IBATCH_BASE_URL ?? '',
    apiKey: env.IBATCH_API_KEY ?? '',
    limits: scaledLimits(scale),
  });
  defer(() => connection.close());
  return { em, connection };
}

/**
 * Starts at most 2 generations every 3 s, so an n-item run lasts at least
 * 1.5·(n−2) s: a test that stops it (kill, signal, outage, fault) once
 * something is charged finds it unfinished, with items unpaid, unless the
 * machine stalls that long. Polls and the next window keep requests flowing,
 * so a stop that shows only on a request is still seen within seconds. The
 * window is the process's own: resume with {@link slowEnv} or {@link envFor}.
 */
export function heldEnv(em: RunningEmulator, scale: number): NodeJS.ProcessEnv {
  return {
    ...envFor(em, scale),
    IBATCH_LIMITS:
      'requests=120/2000ms,generations=2/3000ms,trainings=5/120000ms,uploads=30/2000ms',
  };
}

/**
 * Two folders of one job sharing a PostgreSQL journal at `url`, and machine
 * A (`HOSTNAME=machine-a`) running it under {@link heldEnv} until the
 * emulator has charged `charged` items: A is then certainly unfinished.
 * Machine B's folder `b` holds only the job file.
 */
export async function machineARunning(options: {
  readonly url: string;
  readonly name: string;
  readonly n: number;
  readonly scale: number;
  readonly charged: number;
}) {
  const em = await testEmulator({ timeScale: options.scale });
  const job = imageJob({ name: options.name, n: options.n });
  const a = workspace(job);
  const b = workspace(job);
  const runA = spawnCli(['run', a.jobPath, '--journal', options.url], {
    env: { ...heldEnv(em, options.scale), HOSTNAME: 'machine-a' },
    cwd: a.dir,
  });
  await until(async () => (await charges(em)).length >= options.charged, {
    timeoutMs: 20_000,
    what: `machine A's first ${options.charged} charges`,
  });
  return { em, a, b, runA };
}
