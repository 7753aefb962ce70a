/** Real temporary folders, removed when the test (or file) that made them is done. */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { defer } from './cleanup.js';

/** A fresh folder `ibatch-<prefix>-XXXXXX` under the OS temp dir. */
export function tempDir(prefix = 'test'): string {
  const dir = mkdtempSync(path.join(tmpdir(), `ibatch-${prefix}-`));
  defer(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A temp folder holding a copy of `from` (tests that write beside fixture files). */
export function tempCopy(from: string, prefix = 'test'): string {
  const dir = tempDir(prefix);
  cpSync(from, dir, { recursive: true });
  return dir;
}
