/**
 * Checks of local files named by a job (rows files, media paths, the files of
 * upload sets), all relative to the job file. Globs are expanded by
 * `expandGlobs` of src/uploads; file types come from src/contract.
 */
import { statSync } from 'node:fs';
import { extname, isAbsolute, resolve } from 'node:path';
import { LIMITS, uploadTypeOfFileName } from '../contract/index.js';

/** A problem with one local file, or undefined when it can be uploaded. */
export function uploadableProblem(path: string): string | undefined {
  let size: number;
  try {
    const stat = statSync(path);
    if (!stat.isFile()) return 'is not a file';
    size = stat.size;
  } catch {
    return 'does not exist';
  }
  if (size === 0) return 'is empty (uploads need 1 byte to 8 MB)';
  if (size > LIMITS.uploadMaxBytes)
    return `is ${(size / 2 ** 20).toFixed(1)} MB (uploads are at most 8 MB)`;
  if (!uploadTypeOfFileName(path))
    return `has an unsupported type (${extname(path) || 'no extension'})`;
  return undefined;
}

export function resolveFrom(dir: string, path: string): string {
  return isAbsolute(path) ? path : resolve(dir, path);
}

export function fileExists(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}
