/**
 * Turns an upload set's globs into the files to upload. Globs are relative to
 * the job file's folder; `../refs/*.jpg` is expanded here, but the job loader
 * refuses absolute and `..` globs unless `--allow-outside-job-folder` (see
 * src/job/limits.ts) before any scan. Only regular files are returned:
 * directories, sockets or dangling links never reach the uploader.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { globSync } from 'tinyglobby';
import { UploadInputError } from './errors.js';

export interface GlobExpansion {
  /** Sorted, de-duplicated absolute paths of regular files. */
  readonly files: string[];
  /** The globs that matched no file, in the order given. */
  readonly unmatched: string[];
}

/**
 * The one glob expansion (the job loader's and the uploader's): `globs`
 * against `dir`, regular files only, dot files not matched.
 */
export function expandGlobs(dir: string, globs: readonly string[]): GlobExpansion {
  const cwd = path.resolve(dir);
  const found = new Set<string>();
  const unmatched: string[] = [];
  for (const pattern of globs) {
    const matches =
      pattern.trim() === ''
        ? []
        : globSync([toPosix(pattern)], {
            cwd,
            absolute: true,
            onlyFiles: true,
            dot: false,
            expandDirectories: false,
          });
    const files = matches.map((m) => path.resolve(m)).filter(isRegularFile);
    if (files.length === 0) unmatched.push(pattern);
    for (const file of files) found.add(file);
  }
  return { files: [...found].sort(), unmatched };
}

/**
 * Expands `globs` against `jobDir` like {@link expandGlobs}. Throws
 * {@link UploadInputError} naming the first glob that matches no file, so a
 * typo never silently trains on fewer images.
 */
export async function expandUploadSet(jobDir: string, globs: readonly string[]): Promise<string[]> {
  if (globs.some((g) => g.trim() === '')) throw new UploadInputError('an upload glob is empty');
  const { files, unmatched } = expandGlobs(jobDir, globs);
  const first = unmatched[0];
  if (first !== undefined) {
    throw new UploadInputError(
      `upload glob "${first}" matches no file (in ${path.resolve(jobDir)})`,
    );
  }
  return files;
}

function toPosix(pattern: string): string {
  return path.sep === '\\' ? pattern.replaceAll('\\', '/') : pattern;
}

function isRegularFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}
