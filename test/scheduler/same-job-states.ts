/**
 * The states of test/scheduler/same-job-property.slow.test.ts, made once by real
 * `ibatch run` processes on one timeline of one job (`prop`, 4 CSV rows,
 * 2 credits each) and restored before each combination:
 *
 * - T1: rows 1-2 made (run R1): last night's journal (`stale`);
 * - T2: rows 1-4, killed (SIGKILL at a crash point) with items in flight (`killed`);
 * - T3: the same command again: R2 resumed and finished (`current`, and the
 *   output folder every state is tried against);
 * - then `neighbour` (another job file beside it: the same journal) writes
 *   into the same output folder (`shared`).
 *
 * Rows of a third job (`foreign`, made in a folder of its own) are what a
 * manifest holding other jobs' rows adds.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { priceOf, type RunningEmulator } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { csvJob } from '../cli/csv-job.js';
import { manifestRows, spawnCli, tempDir } from '../helpers/index.js';
import { envFor } from './helpers.js';

export const SCALE = 30;
export const JOB = 'prop';
/** What each item is charged: the emulator's price of one sdxl-lite image. */
export const PRICE = priceOf('sdxl-lite', { input: { prompt: 'x' } }).cost;
/** Enough for every item once plus the two a damaged folder makes again. */
export const BUDGET = 6 * PRICE;
export const PRODUCTS = ['teapot', 'scarf', 'lantern', 'blanket'] as const;
export type Product = (typeof PRODUCTS)[number];
const SETTINGS = ['kitchen', 'street', 'desk', 'sofa'];

export interface Row {
  readonly runId?: string;
  readonly item: string;
  readonly status: string;
  readonly file?: string;
  readonly sha256?: string;
}

/** The folder the job lives in, and what was saved of each state. */
export interface Timeline {
  readonly dir: string;
  readonly jobPath: string;
  readonly saved: string;
  /** The job's manifest rows as T3 wrote them (before the neighbour ran). */
  readonly rows: readonly Row[];
  /** The foreign job's rows and the folder holding its files. */
  readonly foreign: { readonly rows: readonly Row[]; readonly out: string };
  /** What the timeline charged the job (every item once). */
  readonly net: number;
  /**
   * The killed run, the items it had in flight (an open attempt), and how
   * many of those may not have reached the service (intent only): `plan`
   * quotes those, the resume finds them made.
   */
  readonly killed: {
    readonly runId: string;
    readonly inFlight: readonly string[];
    readonly maybeSent: number;
  };
}

const rowsCsv = (products: readonly string[], settings: readonly string[]) =>
  `product,setting\n${products.map((p, i) => `${p},${settings[i]}`).join('\n')}\n`;

export async function cliRun(
  em: RunningEmulator,
  jobPath: string,
  extra: NodeJS.ProcessEnv = {},
  ...args: string[]
) {
  const run = spawnCli(['run', jobPath, ...args], {
    cwd: path.dirname(jobPath),
    env: { ...envFor(em, SCALE), ...extra },
  });
  return run.exited;
}

/** `<dir>/<name>.yaml` (rows: `<name>.csv`), or `job.yaml` and `products.csv` for the job itself. */
function writeJob(dir: string, name: string, products: readonly string[]): string {
  mkdirSync(dir, { recursive: true });
  const own = name === JOB;
  const jobPath = path.join(dir, own ? 'job.yaml' : `${name}.yaml`);
  const rows = own ? 'products.csv' : `${name}.csv`;
  writeFileSync(jobPath, csvJob(name, `budget: ${BUDGET}`).replace('products.csv', rows));
  writeFileSync(path.join(dir, rows), rowsCsv(products, SETTINGS));
  return jobPath;
}

async function ok(result: Promise<{ code: number | null; stderr: string }>) {
  const done = await result;
  expect(done.code, done.stderr).toBe(0);
}

/** Builds the timeline (see the module comment) against `em`. */
export async function buildTimeline(em: RunningEmulator): Promise<Timeline> {
  const dir = tempDir('same-job');
  const saved = path.join(dir, 'saved');
  const jobPath = writeJob(dir, JOB, PRODUCTS.slice(0, 2));
  const save = (from: string, as: string) =>
    cpSync(path.join(dir, from), path.join(saved, as), { recursive: true });
  await ok(cliRun(em, jobPath));
  save('.ibatch', 'stale');
  writeFileSync(path.join(dir, 'products.csv'), rowsCsv(PRODUCTS, SETTINGS));
  const killedRun = await cliRun(em, jobPath, { IBATCH_CRASH_AT: 'after-submitted:1' });
  expect(killedRun.signal, killedRun.stderr).toBe('SIGKILL');
  save('.ibatch', 'killed');
  const killed = await inFlight(path.join(dir, '.ibatch', 'journal.db'));
  expect(killed.inFlight.length, 'the killed run has an item in flight').toBeGreaterThan(0);
  await ok(cliRun(em, jobPath));
  save('.ibatch', 'current-alone');
  save('out', 'out-alone');
  const rows = manifestRows<Row>(path.join(dir, 'out', 'manifest.jsonl'));
  const net = await jobNet(em);
  // The neighbour: another job file beside it, so the same journal and output folder.
  await ok(cliRun(em, writeJob(dir, 'neighbour', ['pencil', 'kettle'])));
  save('.ibatch', 'current-shared');
  save('out', 'out-shared');
  const foreignDir = path.join(dir, 'o');
  await ok(cliRun(em, writeJob(foreignDir, 'foreign', ['ribbon', 'candle'])));
  const foreign = {
    rows: manifestRows<Row>(path.join(foreignDir, 'out', 'manifest.jsonl')),
    out: path.join(foreignDir, 'out'),
  };
  return { dir, jobPath, saved, rows, foreign, net, killed };
}

/** The run the journal holds unfinished and its items with an open attempt. */
async function inFlight(journalPath: string): Promise<Timeline['killed']> {
  const journal = await openJournal(journalPath, { readonly: true });
  try {
    const run = journal.findUnfinishedRun(JOB);
    if (!run) return { runId: '', inFlight: [], maybeSent: 0 };
    const open = journal
      .listItems(run.runId)
      .map((item) => ({
        key: item.itemKey,
        attempt: journal.getOpenAttempt(run.runId, item.itemKey),
      }))
      .filter(({ attempt }) => attempt !== undefined);
    return {
      runId: run.runId,
      inFlight: open.map(({ key }) => key),
      maybeSent: open.filter(({ attempt }) => attempt?.state === 'intent').length,
    };
  } finally {
    journal.close();
  }
}

/** Credits the ledger charged the job (`prop`), net of refunds. */
export async function jobNet(em: RunningEmulator): Promise<number> {
  const ledger = await em.admin.ledger(em.accounts[0]!.id);
  return ledger
    .filter((e) => (e.idempotencyKey ?? '').startsWith(`ib1-${JOB}-`))
    .reduce((sum, e) => sum + (e.type === 'charge' ? e.amount : -e.amount), 0);
}

/** The job's charges in the ledger, as the products they were for. */
export async function chargedProducts(em: RunningEmulator): Promise<Product[]> {
  const ledger = await em.admin.ledger(em.accounts[0]!.id);
  return ledger
    .filter((e) => e.type === 'charge' && (e.idempotencyKey ?? '').startsWith(`ib1-${JOB}-`))
    .map((e) => productOf(e.idempotencyKey ?? ''));
}

export function productOf(text: string): Product {
  const found = PRODUCTS.find((p) => text.includes(p));
  if (!found) throw new Error(`no product in ${text}`);
  return found;
}

/**
 * Puts the folder back as T3 left it (or as the neighbour left it after), with
 * the journal as `journal` says (`current`: as the timeline ended).
 */
export function restore(t: Timeline, journal: string, shared: boolean): void {
  for (const gone of ['.ibatch', 'out']) {
    rmSync(path.join(t.dir, gone), { recursive: true, force: true });
  }
  const which = shared ? 'shared' : 'alone';
  cpSync(path.join(t.saved, `out-${which}`), path.join(t.dir, 'out'), { recursive: true });
  const ibatch = path.join(t.dir, '.ibatch');
  if (journal === 'none') return;
  if (journal === 'empty') {
    mkdirSync(ibatch, { recursive: true });
    writeFileSync(path.join(ibatch, 'journal.db'), '');
    return;
  }
  const saved = journal === 'current' ? `current-${which}` : journal;
  cpSync(path.join(t.saved, saved), ibatch, { recursive: true });
}

/** Appends the foreign job's rows to the manifest and copies their files beside the job's. */
export function addForeignRows(t: Timeline): void {
  const manifest = path.join(t.dir, 'out', 'manifest.jsonl');
  const lines = t.foreign.rows.map((row) => JSON.stringify(row)).join('\n');
  writeFileSync(manifest, `${readFileSync(manifest, 'utf8')}${lines}\n`);
  for (const row of t.foreign.rows) {
    if (!row.file) continue;
    const to = path.join(t.dir, 'out', row.file);
    if (!existsSync(to)) cpSync(path.join(t.foreign.out, row.file), to);
  }
}
