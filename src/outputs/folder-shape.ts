/**
 * Whether an output folder can hold a run's files, judged before anything is
 * spent: every file is written inside the folder (naming.ts `resolveInside`
 * refuses a path through a link that leaves it), so a folder that holds such
 * a link would take the money and then refuse the download. The folder itself
 * may be a link ("outputs on the big disk"): it is judged where it leads.
 */
import { type Dirent, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** A link inside the output folder that leads outside it (or nowhere). */
export interface LeavingLink {
  /** The link, relative to the output folder. */
  readonly link: string;
  /** Where it leads (its real path), or undefined when it leads nowhere. */
  readonly target: string | undefined;
}

/**
 * Why files cannot be written under `outputDir`, or undefined: a part of its
 * path that exists is a file, or the folder is a file (the system would say
 * ENOTDIR or EEXIST half-way through a paid run).
 */
export function outputFolderBlocker(outputDir: string): string | undefined {
  for (let at = path.resolve(outputDir); ; at = path.dirname(at)) {
    let isFolder: boolean;
    try {
      isFolder = statSync(at).isDirectory();
    } catch (error) {
      // Missing (made by the run), a dangling link, or under a file: judge the parent.
      const code = codeOf(error);
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path.dirname(at) !== at) continue;
      return `${at} cannot be read (${codeOf(error) ?? String(error)})`;
    }
    return isFolder ? undefined : `${at} is a file, not a folder`;
  }
}

/**
 * The links under `outputDir` (not the folder itself) that lead outside it,
 * dangling ones included. None when the folder does not exist yet.
 */
export function linksLeaving(outputDir: string): LeavingLink[] {
  let root: string;
  let entries: Dirent[];
  try {
    root = realpathSync(outputDir);
    entries = readdirSync(root, { recursive: true, withFileTypes: true });
  } catch {
    return [];
  }
  const leaving: LeavingLink[] = [];
  for (const entry of entries) {
    if (!entry.isSymbolicLink()) continue;
    const at = path.join(entry.parentPath, entry.name);
    let target: string | undefined;
    try {
      target = realpathSync(at);
    } catch {
      target = undefined;
    }
    const rel = target === undefined ? '..' : path.relative(root, target);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      leaving.push({ link: path.relative(root, at), target });
    }
  }
  return leaving;
}

/** Whether `file` is a plain file with one name (a hard link has more: its bytes change with another name's). */
export function isSingleLinkedFile(file: string): boolean {
  try {
    const stat = lstatSync(file);
    return stat.isFile() && stat.nlink === 1;
  } catch {
    return false;
  }
}
