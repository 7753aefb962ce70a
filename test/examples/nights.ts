import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { LedgerEntry, RunningEmulator } from '../../src/emulator/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { testEmulator } from '../helpers/index.js';
import { createHost, type HostSetup } from './setup.js';

/** The emulator's and our limits' time scale: a night takes a second or two. */
export const NIGHT_SCALE = 40;

/**
 * A host with examples/product-campaign as its job whose env file points at
 * one emulator account for every night (stopped after the test).
 */
export async function nightlyHost(): Promise<{ em: RunningEmulator; host: HostSetup }> {
  const em = await testEmulator({ timeScale: NIGHT_SCALE });
  const host = createHost({
    emulator: { em, timeScale: NIGHT_SCALE },
    job: 'product-campaign',
  });
  return { em, host };
}

/** The growing CSV's next row: two hero shots (6 each) and one 2-copy moodboard (4). */
export const NEW_ROW = 'lamp-04,Desk lamp,a tidy desk,standard';
/** Its item keys carry the product's slug. */
const NEW_ROW_SLUG = 'desk-lamp';
/** What NEW_ROW costs at the emulator's prices. */
export const NEW_ROW_CREDITS = 16;

export interface Spend {
  readonly charges: readonly LedgerEntry[];
  /** charged - refunded */
  readonly net: number;
}

/** The ledger entries after the first `from`, as a night's spend. */
export async function ledgerSince(em: RunningEmulator, from: number): Promise<Spend> {
  const entries = (await em.admin.ledger(em.accounts[0]!.id)).slice(from);
  return {
    charges: entries.filter((e) => e.type === 'charge'),
    net: entries.reduce((sum, e) => sum + (e.type === 'charge' ? e.amount : -e.amount), 0),
  };
}

/** How many entries the ledger holds now (the start of the next night). */
export async function ledgerMark(em: RunningEmulator): Promise<number> {
  return (await em.admin.ledger(em.accounts[0]!.id)).length;
}

/** file -> sha256 of every downloaded file `manifest.jsonl` in `outputDir` lists. */
export function downloadedFiles(outputDir: string): Map<string, string> {
  const files = new Map<string, string>();
  const text = readFileSync(path.join(outputDir, 'manifest.jsonl'), 'utf8');
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const row = JSON.parse(line) as { file?: string; sha256?: string };
    if (row.file && row.sha256) files.set(row.file, row.sha256);
  }
  return files;
}

/** Each file an earlier night downloaded still holds the bytes it was downloaded with. */
export function expectUntouched(outputDir: string, before: ReadonlyMap<string, string>): void {
  for (const [file, sha256] of before) {
    const bytes = readFileSync(path.join(outputDir, file));
    expect(sha256Hex(bytes), file).toBe(sha256);
  }
}

/**
 * Each file an earlier night downloaded is still on disk with its bytes,
 * under its own name or, superseded by a fresh run, moved aside under the
 * name the manifest now gives it.
 */
export function expectKept(outputDir: string, before: ReadonlyMap<string, string>): void {
  const nowBySha = new Map([...downloadedFiles(outputDir)].map(([file, sha]) => [sha, file]));
  for (const [file, sha256] of before) {
    const where = nowBySha.get(sha256);
    expect(where, `${file} is listed in the manifest`).toBeDefined();
    expect(sha256Hex(readFileSync(path.join(outputDir, where as string))), file).toBe(sha256);
  }
}

/** The night since `mark` made NEW_ROW's three items, nothing else, and overwrote no earlier file. */
export async function expectOnlyTheNewRow(
  em: RunningEmulator,
  mark: number,
  outputDir: string,
  before: ReadonlyMap<string, string>,
): Promise<void> {
  const night = await ledgerSince(em, mark);
  expect(night.net).toBe(NEW_ROW_CREDITS);
  expect(night.charges).toHaveLength(3);
  for (const charge of night.charges) expect(charge.idempotencyKey).toContain(NEW_ROW_SLUG);
  expectUntouched(outputDir, before);
}
