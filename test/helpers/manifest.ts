/**
 * The one reader of a `manifest.jsonl` in tests: every line, in file order,
 * nothing skipped or merged (src's `readManifest` skips torn lines and keeps
 * the last row per key; a test must see what is really on disk).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import type { ManifestRow } from '../../src/outputs/index.js';
import { sha256Hex } from '../../src/shared/index.js';

/** The rows of `file`, typed as the caller reads them (the manifest schema by default). */
export function manifestRows<Row = ManifestRow>(file: string): Row[] {
  return manifestRowsOf(readFileSync(file, 'utf8'));
}

/** The rows of a manifest's text (a delivered object's body, say). */
export function manifestRowsOf<Row = ManifestRow>(text: string): Row[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Row);
}

/**
 * The files `outDir`'s manifest lists, in file order, each checked to be in
 * `outDir` with the sha256 its row names.
 */
export function expectManifestFilesIn(outDir: string): string[] {
  const rows = manifestRows(path.join(outDir, 'manifest.jsonl')).filter((row) => row.file);
  for (const row of rows) {
    const file = String(row.file);
    expect(sha256Hex(readFileSync(path.join(outDir, file))), file).toBe(row.sha256);
  }
  return rows.map((row) => String(row.file));
}
