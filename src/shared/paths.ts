/** Path spellings resolved to the one file they name. */
import { realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * The canonical path of `path` as far as it exists: the file's realpath, else
 * its parent's realpath plus the name (a file not created yet), else the
 * resolved path. Two spellings of one file (relative, `x/../y`, a symlink)
 * give the same string.
 */
export function canonicalPath(path: string): string {
  const given = resolve(path);
  try {
    return realpathSync(given);
  } catch {
    try {
      return join(realpathSync(dirname(given)), basename(given));
    } catch {
      return given;
    }
  }
}
