/**
 * Harness of the fault matrix: each case gets a FRESH emulator (in-process,
 * time-scaled, seeded), a temp folder with a small job, and runs `ibatch run`
 * in-process with a captured io (the test kit's runner). After the run the ledger of
 * the emulator is held against the journal: every charge must belong to one
 * attempt of one item, and no item may keep more than one charge.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { expect } from 'vitest';
import type {
  EmulatorOptions,
  FaultScript,
  LedgerEntry,
  RunningEmulator,
} from '../../src/emulator/index.js';
import type { AccountCounters } from '../../src/emulator/stats.js';
import { type ItemRecord, openJournal } from '../../src/journal/index.js';
import {
  type CliResult,
  runCliCaptured,
  scaledLimits,
  tempDir,
  testEmulator,
} from '../helpers/index.js';

/** Emulator windows and latencies are divided by this; our limits match. */
export const TIME_SCALE = 50;
export const SCALED_LIMITS = scaledLimits(TIME_SCALE);

/** Two image items of one copy each (4 credits each on flux-portrait). */
export const TWO_IMAGES_JOB = `version: 1
name: faults
generations:
  - id: pics
    model: flux-portrait
    matrix:
      scene: [beach, rooftop]
    input:
      prompt: "A woman on a {{ scene }}"
      aspectRatio: "9:16"
`;

/** One item: nothing else is in flight when a fault hits it. */
export const ONE_IMAGE_JOB = `version: 1
name: faults
generations:
  - id: pics
    model: flux-portrait
    input:
      prompt: "A woman on a beach"
      aspectRatio: "9:16"
`;

export interface FaultCase {
  readonly em: RunningEmulator;
  readonly dir: string;
  readonly jobPath: string;
  readonly journalPath: string;
  readonly outDir: string;
  readonly account: { readonly id: string; readonly apiKey: string };
  /** Runs `ibatch run JOB --base-url ... --limits ...` in-process. */
  run(options?: { apiKey?: string; args?: readonly string[] }): Promise<CliResult>;
  ledger(): Promise<LedgerEntry[]>;
  items(): Promise<ItemRecord[]>;
  /** Asserts the ledger holds no double charge; returns net credits per item key. */
  expectNoDoubleCharge(): Promise<Map<string, number>>;
  manifest(): Promise<Array<Record<string, unknown>>>;
  /** The account's counters, the injected faults and the scripts not yet used. */
  facts(): Promise<CaseFacts>;
}

export interface CaseFacts {
  readonly counters: AccountCounters;
  readonly injected: readonly string[];
  readonly pendingScripts: number;
  readonly earlyRequests: number;
}

export async function freshCase(
  options: { emulator?: EmulatorOptions; job?: string; scripts?: FaultScript[] } = {},
): Promise<FaultCase> {
  const timeScale = options.emulator?.timeScale ?? TIME_SCALE;
  const em = await testEmulator({ seed: 7, ...options.emulator, timeScale });
  const dir = tempDir('faults');
  const jobPath = path.join(dir, 'job.yaml');
  await writeFile(jobPath, options.job ?? TWO_IMAGES_JOB);
  if (options.scripts?.length) await em.admin.scriptFaults(options.scripts);
  const account = em.accounts[0];
  if (!account) throw new Error('the emulator started without an account');
  const journalPath = path.join(dir, '.ibatch', 'journal.db');
  const outDir = path.join(dir, 'out');

  const fc: FaultCase = {
    em,
    dir,
    jobPath,
    journalPath,
    outDir,
    account,
    run: (runOptions = {}) =>
      runCliCaptured(
        [
          'run',
          jobPath,
          '--base-url',
          em.baseUrl,
          '--limits',
          scaledLimits(timeScale),
          '--out',
          outDir,
          '--log-format',
          'json',
          ...(runOptions.args ?? []),
        ],
        { PATH: process.env.PATH ?? '', IBATCH_API_KEY: runOptions.apiKey ?? account.apiKey },
        dir,
      ),
    ledger: () => em.admin.ledger(account.id),
    items: () => readItems(journalPath),
    async expectNoDoubleCharge() {
      return checkLedger(journalPath, await em.admin.ledger(account.id));
    },
    async facts() {
      const stats = await em.admin.stats();
      const mine = stats.accounts.find((a) => a.id === account.id);
      if (!mine) throw new Error('the account is missing from the emulator stats');
      return {
        counters: mine.counters,
        injected: stats.faults.map((f) => `${f.fault}@${f.endpoint}`),
        pendingScripts: stats.pendingFaultScripts.length,
        earlyRequests: stats.earlyRequests.length,
      };
    },
    async manifest() {
      const text = await readFile(path.join(outDir, 'manifest.jsonl'), 'utf8');
      return text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>);
    },
  };
  return fc;
}

async function readItems(journalPath: string): Promise<ItemRecord[]> {
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    const runs = journal.listRuns();
    return runs.flatMap((run) => journal.listItems(run.runId));
  } finally {
    journal.close();
  }
}

/**
 * Every charge in the ledger must carry an idempotency key the journal knows
 * (so it belongs to exactly one attempt of one item), and per item at most one
 * attempt may stay charged net of refunds. Returns the net credits per item.
 */
async function checkLedger(
  journalPath: string,
  ledger: readonly LedgerEntry[],
): Promise<Map<string, number>> {
  const journal = await openJournal(journalPath, { readonly: true });
  const itemOfKey = new Map<string, string>();
  try {
    for (const run of journal.listRuns()) {
      for (const item of journal.listItems(run.runId)) {
        for (const attempt of journal.listAttempts(run.runId, item.itemKey)) {
          itemOfKey.set(attempt.idempotencyKey, `${run.runId}/${item.itemKey}`);
        }
      }
    }
  } finally {
    journal.close();
  }
  const netByKey = new Map<string, number>();
  const chargesByKey = new Map<string, number>();
  for (const entry of ledger) {
    const key = entry.idempotencyKey;
    expect(key, `ledger entry ${entry.seq} carries an idempotency key`).toBeTypeOf('string');
    if (key === undefined) continue;
    expect(itemOfKey.has(key), `ledger key ${key} belongs to an attempt in the journal`).toBe(true);
    const sign = entry.type === 'charge' ? 1 : -1;
    netByKey.set(key, (netByKey.get(key) ?? 0) + sign * entry.amount);
    if (entry.type === 'charge') chargesByKey.set(key, (chargesByKey.get(key) ?? 0) + 1);
  }
  for (const [key, charges] of chargesByKey) {
    expect(charges, `key ${key} charged once by the service`).toBe(1);
  }
  const netByItem = new Map<string, number>();
  const chargedAttempts = new Map<string, number>();
  for (const [key, net] of netByKey) {
    const item = itemOfKey.get(key) ?? key;
    netByItem.set(item, (netByItem.get(item) ?? 0) + net);
    if (net > 0) chargedAttempts.set(item, (chargedAttempts.get(item) ?? 0) + 1);
  }
  for (const [item, attempts] of chargedAttempts) {
    expect(attempts, `item ${item} keeps at most one net charge`).toBe(1);
  }
  return netByItem;
}
