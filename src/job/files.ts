/**
 * Local files named by a job: upload set globs, rows files and media paths,
 * all relative to the job file.
 */
import { statSync } from 'node:fs';
import { extname, isAbsolute, resolve } from 'node:path';
import { globSync } from 'tinyglobby';
import { LIMITS } from '../contract/index.js';

const MIME_TYPES: Readonly<Record<string, string>> = {
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.png': 'image/png',
  '.webp': 'image/webp',
  '.gif': 'image/gif',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.m4a': 'audio/mp4',
  '.ogg': 'audio/ogg',
};

/** Training accepts JPEG, PNG or WebP only (reference: POST /training/jobs). */
export const TRAINING_MIME_TYPES = new Set(['image/jpeg', 'image/png', 'image/webp']);

/** MIME type by file extension; undefined for types the service does not take. */
export function mimeTypeOf(path: string): string | undefined {
  return MIME_TYPES[extname(path).toLowerCase()];
}

/** Absolute, sorted, deduplicated files matching the globs. */
export function resolveGlobs(dir: string, globs: readonly string[]): string[] {
  const files = globSync([...globs], {
    cwd: dir,
    absolute: true,
    onlyFiles: true,
    expandDirectories: false,
  });
  return [...new Set(files.map((f) => resolve(f)))].sort();
}

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
  if (!mimeTypeOf(path)) return `has an unsupported type (${extname(path) || 'no extension'})`;
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
