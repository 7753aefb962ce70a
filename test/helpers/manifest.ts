/**
 * The one reader of a `manifest.jsonl` in tests: every line, in file order,
 * nothing skipped or merged (src's `readManifest` skips torn lines and keeps
 * the last row per key; a test must see what is really on disk).
 */
import { readFileSync } from 'node:fs';
import type { ManifestRow } from '../../src/outputs/index.js';

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
