/**
 * `mkdir -p` without Node's recursive mkdir, which loops for ever where a
 * parent exists but refuses children (`/proc/self/x`: mkdir says ENOENT, the
 * parent says EEXIST, round again). Each missing level is made once, from the
 * nearest existing folder down, so any path ends in a folder or in one error.
 */
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** The missing levels of `dir`, from the nearest existing folder down. */
function missingLevels(dir: string): string[] {
  const missing: string[] = [];
  for (let at = path.resolve(dir); !exists(at); at = path.dirname(at)) {
    if (path.dirname(at) === at) break;
    missing.push(at);
  }
  return missing.reverse();
}

/** Whether `p` exists (a file or a folder); any other trouble than ENOENT is thrown. */
function exists(p: string): boolean {
  try {
    statSync(p);
    return true;
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** `mkdir -p` without the loop: each level once; another process making one first is fine. */
export function makeFolderSync(dir: string): void {
  for (const level of missingLevels(dir)) {
    try {
      mkdirSync(level);
    } catch (error) {
      if (codeOf(error) !== 'EEXIST') throw error;
    }
  }
}
