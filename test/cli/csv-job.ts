import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { manifestRows, runCliCaptured } from '../helpers/index.js';
import { envFor, type Workspace } from '../scheduler/helpers.js';

export const SCALE = 30;

export const ROWS = [
  ['mug', 'kitchen'],
  ['scarf', 'street'],
  ['lamp', 'desk'],
] as const;

/** A CSV-driven job: one sdxl-lite image (2 credits) per row. */
export function csvJob(name: string, extra = ''): string {
  return [
    'version: 1',
    `name: ${name}`,
    'output: out',
    extra,
    'generations:',
    '  - id: shots',
    '    model: sdxl-lite',
    '    rows: products.csv',
    '    input:',
    '      prompt: "{{ product }} on a table, {{ setting }}"',
    '',
  ].join('\n');
}

export function writeRows(ws: Workspace, rows: ReadonlyArray<readonly [string, string]>): void {
  const text = ['product,setting', ...rows.map(([p, s]) => `${p},${s}`)].join('\n');
  writeFileSync(path.join(ws.dir, 'products.csv'), `${text}\n`);
}

export interface ManifestLine {
  readonly item: string;
  readonly file?: string;
  readonly sha256?: string;
  readonly runId?: string;
}

export function manifest(ws: Workspace): ManifestLine[] {
  return manifestRows<ManifestLine>(path.join(ws.dir, 'out', 'manifest.jsonl'));
}

/** Every file the manifest lists still has the sha256 it was downloaded with. */
export function expectFilesIntact(ws: Workspace, rows: readonly ManifestLine[]): void {
  for (const row of rows) {
    if (!row.file) continue;
    const bytes = readFileSync(path.join(ws.dir, 'out', row.file));
    expect(sha256Hex(bytes), row.file).toBe(row.sha256);
  }
}

export async function run(em: RunningEmulator, ws: Workspace, ...args: string[]) {
  return runCliCaptured(['run', ws.jobPath, ...args], envFor(em, SCALE), ws.dir);
}
