/**
 * What the download stage (downloads.ts) checks outside a download: which
 * failures no retry fixes, the temp files a killed process left, and whether
 * a file the journal records as downloaded is still the one it recorded.
 */
import type { Dirent } from 'node:fs';
import { lstat, readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import type { OutputRecord } from '../journal/index.js';
import {
  DownloadError,
  isPartFileOf,
  PathEscapeError,
  ProtectedPathError,
} from '../outputs/index.js';
import { LocalFileError } from '../shared/index.js';
import { hashFile } from '../uploads/index.js';

/** A download failure no retry can fix: its error says it is not retryable. */
export function isLocalProblem(error: unknown): boolean {
  return error instanceof PathEscapeError || error instanceof LocalFileError;
}

/** A download failure fetching again cannot help: the item fails for good. */
export function failsForGood(error: unknown): boolean {
  return (
    error instanceof ProtectedPathError || (error instanceof DownloadError && !error.retryable)
  );
}

/**
 * A process killed mid-download (kill -9) leaves its `.<name>.part-<hex>`
 * temp file behind (see src/outputs/download.ts); the download is redone
 * under a new temp name, so remove the orphans once, before any download of
 * this process starts. Only this job's: one process per job works the
 * folder (its per-job lock), while another job sharing the folder may be
 * downloading into its own temp files right now. The folder is read off the
 * main thread (a resume's folder holds a file and a sidecar per output, and
 * its first create does not wait for them); a temp file that cannot be
 * removed is left, as the new download does not use its name.
 */
export async function removeStalePartFiles(dir: string, tag: string): Promise<void> {
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch {
    return; // no output folder yet
  }
  const stale = entries.filter((entry) => entry.isFile() && isPartFileOf(entry.name, tag));
  await Promise.all(
    stale.map((entry) =>
      rm(path.join(entry.parentPath, entry.name), { force: true }).catch(() => {}),
    ),
  );
}

export const exists = (file: string): Promise<boolean> =>
  lstat(file).then(
    () => true,
    () => false,
  );

/**
 * Why a recorded file needs downloading again, or undefined: missing, not a
 * regular file, another size, or written after it was recorded with other
 * bytes (hashed only in that last case).
 */
export async function damageOf(file: string, output: OutputRecord): Promise<string | undefined> {
  const stat = await lstat(file).catch(() => undefined);
  if (!stat) return 'missing';
  if (!stat.isFile()) return 'not a regular file';
  if (output.bytes !== null && stat.size !== output.bytes) return 'of another size';
  if (stat.mtimeMs > output.updatedAt && output.sha256 && (await hashFile(file)) !== output.sha256)
    return 'edited';
  return undefined;
}
