/**
 * Turns an upload set's globs into the files to upload. Globs are relative to
 * the job file's folder; `../refs/*.jpg` is allowed (a user's own folders), but
 * only regular files are returned: directories, sockets or dangling links never
 * reach the uploader.
 */
import { statSync } from 'node:fs';
import path from 'node:path';
import { glob } from 'tinyglobby';
import { UploadInputError } from './errors.js';

/**
 * Expands `globs` against `jobDir` into sorted, de-duplicated absolute paths of
 * regular files. Throws {@link UploadInputError} naming the first glob that
 * matches no file, so a typo never silently trains on fewer images.
 */
export async function expandUploadSet(jobDir: string, globs: readonly string[]): Promise<string[]> {
  const cwd = path.resolve(jobDir);
  const found = new Set<string>();
  for (const pattern of globs) {
    if (pattern.trim() === '') throw new UploadInputError('an upload glob is empty');
    const matches = await glob([toPosix(pattern)], {
      cwd,
      absolute: true,
      onlyFiles: true,
      dot: false,
      expandDirectories: false,
    });
    const files = matches.map((m) => path.resolve(m)).filter(isRegularFile);
    if (files.length === 0) {
      throw new UploadInputError(`upload glob "${pattern}" matches no file (in ${cwd})`);
    }
    for (const file of files) found.add(file);
  }
  return [...found].sort();
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
